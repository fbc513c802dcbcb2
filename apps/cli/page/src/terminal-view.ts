/**
 * One session's live terminal in the page: an xterm.js terminal showing the screen the engine keeps (its
 * snapshot first, then every byte the session prints, conch's markers already removed by the daemon), at the
 * session's own size, its font scaled to fit the panel. Read-only until the person takes over; taking over
 * attaches again exactly as `conch attach --take-over` does (the engine decides, and under a policy records
 * it), and the session's size then follows the panel, as it follows a window for `conch attach`.
 */

import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { agentHeaderText } from '../../src/agent-header.js';
import { ATTACH_METHODS } from '../../src/attach-methods.js';
import type { PageConnection } from './rpc.js';

type Params = Record<string, unknown>;

/** What `conch/attach` answers. */
interface AttachResult {
  attach_id: string;
  input: boolean;
  read_only_reason?: string;
  screen: string[];
  cursor?: { row: number; col: number };
  alt_screen?: boolean;
  cols?: number;
  rows?: number;
}

/** Hands each view the notifications of its attach id (and keeps those that arrive before its id is known). */
export class ViewRouter {
  readonly #views = new Map<string, TerminalView>();
  readonly #early = new Map<string, Array<[string, Params]>>();

  /** Delivers a notification to the view it names. */
  route(method: string, params: Params): void {
    const id = String(params.attach_id ?? '');
    const view = this.#views.get(id);
    if (view) {
      view.handle(method, params);
      return;
    }
    let queue = this.#early.get(id);
    if (!queue) {
      queue = [];
      this.#early.set(id, queue);
      if (this.#early.size > 16) this.#early.delete(this.#early.keys().next().value as string);
    }
    if (queue.length < 1000) queue.push([method, params]);
  }

  /** `view` now has `id`: it gets what came for it already, then the rest. */
  claim(id: string, view: TerminalView): void {
    this.#views.set(id, view);
    for (const [method, params] of this.#early.get(id) ?? []) view.handle(method, params);
    this.#early.delete(id);
  }

  release(id: string): void {
    this.#views.delete(id);
    this.#early.delete(id);
  }
}

/** Base64 of bytes. */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Bytes of base64. */
function unbase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The font size of a terminal the person types into. */
const TYPING_FONT_PX = 13;
/** Bounds of the font size of a watched terminal, scaled to fit. */
const MIN_FONT_PX = 6;
const MAX_FONT_PX = 14;

/** What a view tells its panel. */
export interface ViewEvents {
  /** A line for the panel's notice strip (an agent's isolated command, a drop, the end). */
  notice(text: string): void;
  /** Whether the person types into it changed, or it closed. */
  changed(): void;
}

/** A session's live terminal (see the module doc). */
export class TerminalView {
  readonly element: HTMLElement;
  readonly #term: Terminal;
  readonly #fit = new FitAddon();
  readonly #encoder = new TextEncoder();
  readonly #resizeObserver: ResizeObserver;
  #attachId: string | undefined;
  #input = false;
  #readOnlyReason: string | undefined;
  #closed = false;
  #disposed = false;

  constructor(
    private readonly rpc: PageConnection,
    private readonly router: ViewRouter,
    readonly sessionId: string,
    private readonly events: ViewEvents,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'term';
    this.#term = new Terminal({
      fontSize: MAX_FONT_PX,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      scrollback: 0,
      disableStdin: true,
      cursorBlink: false,
      theme: { background: '#0d1117', foreground: '#d6deeb' },
    });
    this.#term.loadAddon(this.#fit);
    this.#term.open(this.element);
    this.#term.onData((data) => this.#type(this.#encoder.encode(data)));
    this.#term.onBinary((data) => this.#type(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
    let pending = 0;
    this.#resizeObserver = new ResizeObserver(() => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(() => this.#layout());
    });
    this.#resizeObserver.observe(this.element);
  }

  /** True while the person's keystrokes go to the session. */
  get input(): boolean {
    return this.#input;
  }

  /** Why the view is read-only, as the engine says. */
  get readOnlyReason(): string | undefined {
    return this.#readOnlyReason;
  }

  /** True once the session's shell ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Watches the session (read-only), or takes it over (`takeOver`); replaces the current view. */
  async attach(takeOver: boolean): Promise<void> {
    await this.#detach();
    const size = takeOver ? this.#typingSize() : undefined;
    const result = await this.rpc.request<AttachResult>(ATTACH_METHODS.attach, {
      session_id: this.sessionId,
      take_over: takeOver,
      read_only: !takeOver,
      ...(size ?? {}),
    });
    if (this.#disposed) {
      void this.rpc.request(ATTACH_METHODS.detach, { attach_id: result.attach_id }).catch(() => {});
      return;
    }
    this.#attachId = result.attach_id;
    this.#input = result.input;
    this.#readOnlyReason = result.read_only_reason;
    this.element.classList.toggle('typing', this.#input);
    this.#term.options.disableStdin = !this.#input;
    this.#term.options.cursorBlink = this.#input;
    if (this.#input) this.#term.options.fontSize = TYPING_FONT_PX;
    this.#paint(result);
    this.router.claim(result.attach_id, this);
    this.#layout();
    if (this.#input) this.#term.focus();
    this.events.changed();
  }

  /** Handles one notification of this view's attach id. */
  handle(method: string, params: Params): void {
    if (method === ATTACH_METHODS.output) this.#term.write(unbase64(String(params.data ?? '')));
    else if (method === ATTACH_METHODS.command) {
      const command = params as unknown as Parameters<typeof agentHeaderText>[0];
      if (command.isolated) this.events.notice(agentHeaderText(command));
    } else if (method === ATTACH_METHODS.dropped) {
      this.events.notice(`[${Number(params.bytes)} bytes not shown: the page fell behind; redrawn]`);
      if (Array.isArray(params.screen))
        this.#paint({ screen: params.screen as string[], ...this.#cursorOf(params) });
    } else if (method === ATTACH_METHODS.closed) {
      this.#closed = true;
      this.#input = false;
      this.#term.options.disableStdin = true;
      this.element.classList.remove('typing');
      if (this.#attachId) this.router.release(this.#attachId);
      this.#attachId = undefined;
      this.events.notice('[the shell ended]');
      this.events.changed();
    }
  }

  /** Stops watching and frees the terminal. */
  dispose(): void {
    this.#disposed = true;
    this.#resizeObserver.disconnect();
    void this.#detach();
    this.#term.dispose();
    this.element.remove();
  }

  #cursorOf(params: Params): { cursor?: { row: number; col: number } } {
    const cursor = params.cursor as { row: number; col: number } | undefined;
    return cursor ? { cursor } : {};
  }

  async #detach(): Promise<void> {
    const id = this.#attachId;
    if (id === undefined) return;
    this.#attachId = undefined;
    this.#input = false;
    this.router.release(id);
    await this.rpc.request(ATTACH_METHODS.detach, { attach_id: id }).catch(() => {});
  }

  #type(bytes: Uint8Array): void {
    if (!this.#input || this.#attachId === undefined || bytes.length === 0) return;
    this.rpc
      .request(ATTACH_METHODS.input, { attach_id: this.#attachId, data: base64(bytes) })
      .catch((error: Error) => this.events.notice(`[not typed: ${error.message}]`));
  }

  /** Starts from the engine's screen: its size, its rows (trailing blank ones left out), its cursor. */
  #paint(screen: Pick<AttachResult, 'screen' | 'cursor' | 'cols' | 'rows'>): void {
    this.#term.reset();
    if (screen.cols && screen.rows) this.#term.resize(screen.cols, screen.rows);
    const rows = [...screen.screen];
    while (rows.length > 0 && rows.at(-1)?.trim() === '') rows.pop();
    const cursor = screen.cursor ? `\u001b[${screen.cursor.row + 1};${screen.cursor.col + 1}H` : '';
    this.#term.write(`\u001b[H\u001b[2J${rows.join('\r\n')}${cursor}`);
  }

  /** The size that fits the panel at the typing font (what the session is resized to when taken over). */
  #typingSize(): { cols: number; rows: number } | undefined {
    this.element.classList.add('typing');
    this.#term.options.fontSize = TYPING_FONT_PX;
    const size = this.#fit.proposeDimensions();
    return size && size.cols > 0 && size.rows > 0 ? { cols: size.cols, rows: size.rows } : undefined;
  }

  /** Fits the view: a watched terminal keeps the session's size and scales its font; a typed one resizes it. */
  #layout(): void {
    if (this.#disposed || this.element.clientWidth === 0) return;
    if (this.#input) {
      const size = this.#fit.proposeDimensions();
      if (!size || size.cols <= 0 || size.rows <= 0) return;
      if (size.cols === this.#term.cols && size.rows === this.#term.rows) return;
      this.#term.resize(size.cols, size.rows);
      if (this.#attachId)
        void this.rpc.request(ATTACH_METHODS.resize, { attach_id: this.#attachId, ...size }).catch(() => {});
      return;
    }
    const screen = this.element.querySelector<HTMLElement>('.xterm-screen');
    if (!screen || screen.offsetWidth === 0 || screen.offsetHeight === 0) return;
    const width = this.element.clientWidth - 8;
    const height = Math.max(160, window.innerHeight * 0.6);
    const font = this.#term.options.fontSize ?? MAX_FONT_PX;
    const scale = Math.min(width / screen.offsetWidth, height / screen.offsetHeight);
    const next = Math.min(MAX_FONT_PX, Math.max(MIN_FONT_PX, Math.floor(font * scale * 2) / 2));
    if (Math.abs(next - font) >= 0.5) this.#term.options.fontSize = next;
  }
}
