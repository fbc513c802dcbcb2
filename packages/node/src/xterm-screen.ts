/**
 * XtermScreenRenderer: the core's `ScreenRenderer` with a real terminal emulator (`@xterm/headless`),
 * for the `screen` view of docs/output.md (how an agent reads vim, htop, less and menus).
 *
 * The emulator is loaded and created when a screen is first needed (a snapshot, the cursor-keys mode), not
 * when a session opens: most sessions never show a screen, and loading it took a tenth of a server's start.
 */
import type { Disposable, ScreenFactory, ScreenRenderer, ScreenSnapshot } from '@conch/core';
import type { Terminal as XtermTerminal } from '@xterm/headless';

/** `@xterm/headless`, loaded once by the first renderer that needs an emulator. */
let xtermModule: Promise<typeof import('@xterm/headless')> | undefined;

function loadXterm(): Promise<typeof import('@xterm/headless')> {
  xtermModule ??= import('@xterm/headless').then(
    (module) => (module as { default?: typeof import('@xterm/headless') }).default ?? module,
  );
  return xtermModule;
}

/** A resize that came before the emulator existed, kept in order with the output around it. */
interface PendingResize {
  cols: number;
  rows: number;
}

/** Largest accepted number of columns or rows (capped, so a client cannot make the emulator allocate without bound). */
export const MAX_SCREEN_DIMENSION = 1000;

/** Default scrollback of the emulator, in lines (only the visible screen is reported, so none). */
export const DEFAULT_SCREEN_SCROLLBACK = 0;

/**
 * Output is handed to the emulator lazily, when a screen is asked for: parsing every byte of a flood
 * through a full terminal emulator costs far more than the flood itself. Only this many of the newest
 * unparsed bytes are kept; when more arrive, the emulator is reset and fed just the newest ones (cut at a
 * line start), which is what a person would see after the output scrolled past.
 */
export const MAX_PENDING_SCREEN_BYTES = 1024 * 1024;

function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 0x20) end--;
  return end === line.length ? line : line.slice(0, end);
}

/** Options for {@link XtermScreenRenderer}. */
export interface XtermScreenOptions {
  /** Scrollback lines kept by the emulator. Default {@link DEFAULT_SCREEN_SCROLLBACK}, at most 10000. */
  scrollback?: number;
}

/**
 * Clamps a terminal dimension to 1..{@link MAX_SCREEN_DIMENSION} (non-numbers become `fallback`).
 * xterm itself needs at least 2 columns, so a 1-column request renders 2.
 */
export function clampScreenDimension(value: number, fallback: number): number {
  if (!Number.isFinite(value)) return fallback;
  return Math.min(MAX_SCREEN_DIMENSION, Math.max(1, Math.trunc(value)));
}

/**
 * A headless xterm fed with a terminal's bytes. Writes are parsed asynchronously, in order (a resize
 * happens after the bytes written before it); {@link snapshot} resolves once everything written so far is
 * parsed. The emulator's replies to terminal queries (e.g. cursor position `ESC [ 6 n`) are available
 * through {@link onReply} for a caller that wants to answer them like a real terminal.
 */
export class XtermScreenRenderer implements ScreenRenderer {
  #terminal: XtermTerminal | undefined;
  /** The emulator being created (the first call that needs it loads the module). */
  #creating: Promise<void> | undefined;
  /** The size the emulator is created with (the latest resize before it exists). */
  #cols: number;
  #rows: number;
  readonly #scrollback: number;
  #queue: Array<Uint8Array | PendingResize> = [];
  #queuedBytes = 0;
  #overflowed = false;
  #droppedBytes = 0;
  #disposed = false;
  #final: ScreenSnapshot | undefined;
  readonly #waiters = new Set<() => void>();
  /** Reply listeners registered before the emulator existed, attached when it is created. */
  readonly #replyAttachments = new Set<(terminal: XtermTerminal) => void>();

  constructor(cols: number, rows: number, options: XtermScreenOptions = {}) {
    const scrollback = Math.min(
      10_000,
      Math.max(0, Math.trunc(options.scrollback ?? DEFAULT_SCREEN_SCROLLBACK)),
    );
    this.#scrollback = Number.isFinite(scrollback) ? scrollback : DEFAULT_SCREEN_SCROLLBACK;
    this.#cols = clampScreenDimension(cols, 80);
    this.#rows = clampScreenDimension(rows, 24);
  }

  /** Bytes never shown because more than {@link MAX_PENDING_SCREEN_BYTES} arrived between two screens. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** Feeds terminal output (queued until a screen is needed). Ignored after {@link dispose}. */
  write(chunk: Uint8Array): void {
    if (this.#disposed || chunk.length === 0) return;
    // The caller may reuse its buffer: keep a copy.
    this.#queue.push(chunk.slice());
    this.#queuedBytes += chunk.length;
    while (this.#queuedBytes > MAX_PENDING_SCREEN_BYTES && this.#queue.length > 1) {
      const dropped = this.#queue.shift()!;
      if (dropped instanceof Uint8Array) {
        this.#queuedBytes -= dropped.length;
        this.#droppedBytes += dropped.length;
        this.#overflowed = true;
      } else {
        // The output it applied to is gone: the emulator starts at the size that followed it.
        this.#cols = dropped.cols;
        this.#rows = dropped.rows;
      }
    }
  }

  /** Hands queued output to the emulator (after a reset when some was dropped). */
  #flush(terminal: XtermTerminal): void {
    if (this.#disposed || this.#queue.length === 0) return;
    let items = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#overflowed) {
      this.#overflowed = false;
      terminal.reset();
      // Start at a line boundary so the emulator does not begin inside an escape sequence.
      const first = items[0];
      if (first instanceof Uint8Array) {
        const nl = first.indexOf(0x0a);
        items = [nl >= 0 ? first.subarray(nl + 1) : first, ...items.slice(1)];
      }
    }
    for (const item of items) {
      if (!(item instanceof Uint8Array)) this.#resizeAfterPending(terminal, item.cols, item.rows);
      else if (item.length > 0) terminal.write(item);
    }
  }

  /** Resizes the screen (clamped to 1..1000) after the bytes already written are parsed. */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    const terminal = this.#terminal;
    const c = clampScreenDimension(cols, terminal?.cols ?? this.#cols);
    const r = clampScreenDimension(rows, terminal?.rows ?? this.#rows);
    if (terminal) {
      this.#flush(terminal);
      this.#resizeAfterPending(terminal, c, r);
    } else if (this.#queue.length === 0) {
      this.#cols = c;
      this.#rows = r;
    } else {
      this.#queue.push({ cols: c, rows: r });
    }
  }

  /** Resolves once every byte written so far has been parsed, with the visible screen. */
  async snapshot(): Promise<ScreenSnapshot> {
    await this.#settled();
    return this.#final ?? this.#capture();
  }

  /** Whether the program switched the cursor keys to application mode (DECCKM), after pending output. */
  async applicationCursorKeys(): Promise<boolean> {
    await this.#settled();
    return this.#disposed || !this.#terminal ? false : this.#terminal.modes.applicationCursorKeysMode;
  }

  /** Listens to the emulator's replies to terminal queries (DSR, DA…), as a real terminal would send them. */
  onReply(listener: (data: string) => void): Disposable {
    if (this.#disposed) return { dispose() {} };
    if (this.#terminal) return this.#terminal.onData(listener);
    // Replies come from parsed output, which waits for the emulator: listen once it exists.
    let attached: Disposable | undefined;
    const attach = (terminal: XtermTerminal) => {
      attached = terminal.onData(listener);
    };
    this.#replyAttachments.add(attach);
    return {
      dispose: () => {
        this.#replyAttachments.delete(attach);
        attached?.dispose();
      },
    };
  }

  /** Releases the emulator. Pending and later snapshots return the last screen. */
  dispose(): void {
    if (this.#disposed) return;
    this.#queue = [];
    this.#final = this.#capture();
    this.#disposed = true;
    this.#terminal?.dispose();
    this.#replyAttachments.clear();
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  #resizeAfterPending(terminal: XtermTerminal, cols: number, rows: number): void {
    this.#afterPending(terminal, () => {
      if (!this.#disposed && (cols !== terminal.cols || rows !== terminal.rows)) terminal.resize(cols, rows);
    });
  }

  #afterPending(terminal: XtermTerminal, fn: () => void): void {
    // An empty write's callback runs after every earlier chunk is parsed and before any later one.
    terminal.write('', fn);
  }

  /** Creates the emulator (once; the module loads on first use). */
  #emulator(): Promise<void> {
    this.#creating ??= loadXterm().then(({ Terminal }) => {
      if (this.#disposed) return;
      const terminal = new Terminal({
        cols: this.#cols,
        rows: this.#rows,
        scrollback: this.#scrollback,
        allowProposedApi: true,
      });
      this.#terminal = terminal;
      for (const attach of this.#replyAttachments) attach(terminal);
      this.#replyAttachments.clear();
    });
    return this.#creating;
  }

  async #settled(): Promise<void> {
    if (this.#disposed) return;
    await this.#emulator();
    const terminal = this.#terminal;
    if (this.#disposed || !terminal) return;
    this.#flush(terminal);
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
      this.#afterPending(terminal, wake);
    });
  }

  #capture(): ScreenSnapshot {
    const terminal = this.#terminal;
    if (!terminal) {
      // No screen was ever asked for: what an emulator that parsed nothing shows.
      return {
        rows: Array.from({ length: this.#rows }, () => ''),
        cursor: { row: 0, col: 0 },
        alt_screen: false,
        cols: this.#cols,
        rows_count: this.#rows,
      };
    }
    const buffer = terminal.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < terminal.rows; y++) {
      rows.push(trimTrailingSpaces(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? ''));
    }
    return {
      rows,
      cursor: { row: buffer.cursorY, col: Math.min(buffer.cursorX, terminal.cols - 1) },
      alt_screen: buffer.type === 'alternate',
      cols: terminal.cols,
      rows_count: terminal.rows,
    };
  }
}

/** The core's {@link ScreenFactory}: a new {@link XtermScreenRenderer} of the given size. */
export const createXtermScreen: ScreenFactory = (cols, rows) => new XtermScreenRenderer(cols, rows);
