/**
 * XtermScreenRenderer: the core's `ScreenRenderer` with a real terminal emulator (`@xterm/headless`),
 * for the `screen` view of docs/output.md (how an agent reads vim, htop, less and menus).
 */
import type { Disposable, ScreenFactory, ScreenRenderer, ScreenSnapshot } from '@conch/core';
import xterm from '@xterm/headless';

const { Terminal } = xterm;
type XtermTerminal = InstanceType<typeof Terminal>;

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
  readonly #terminal: XtermTerminal;
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  #overflowed = false;
  #droppedBytes = 0;
  #disposed = false;
  #final: ScreenSnapshot | undefined;
  readonly #waiters = new Set<() => void>();

  constructor(cols: number, rows: number, options: XtermScreenOptions = {}) {
    const scrollback = Math.min(
      10_000,
      Math.max(0, Math.trunc(options.scrollback ?? DEFAULT_SCREEN_SCROLLBACK)),
    );
    this.#terminal = new Terminal({
      cols: clampScreenDimension(cols, 80),
      rows: clampScreenDimension(rows, 24),
      scrollback: Number.isFinite(scrollback) ? scrollback : DEFAULT_SCREEN_SCROLLBACK,
      allowProposedApi: true,
    });
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
      this.#queuedBytes -= dropped.length;
      this.#droppedBytes += dropped.length;
      this.#overflowed = true;
    }
  }

  /** Hands queued output to the emulator (after a reset when some was dropped). */
  #flush(): void {
    if (this.#disposed || this.#queue.length === 0) return;
    let chunks = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    if (this.#overflowed) {
      this.#overflowed = false;
      this.#terminal.reset();
      // Start at a line boundary so the emulator does not begin inside an escape sequence.
      const first = chunks[0]!;
      const nl = first.indexOf(0x0a);
      chunks = [nl >= 0 ? first.subarray(nl + 1) : first, ...chunks.slice(1)];
    }
    for (const chunk of chunks) if (chunk.length > 0) this.#terminal.write(chunk);
  }

  /** Resizes the screen (clamped to 1..1000) after the bytes already written are parsed. */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    const c = clampScreenDimension(cols, this.#terminal.cols);
    const r = clampScreenDimension(rows, this.#terminal.rows);
    this.#flush();
    this.#afterPending(() => {
      if (!this.#disposed && (c !== this.#terminal.cols || r !== this.#terminal.rows))
        this.#terminal.resize(c, r);
    });
  }

  /** Resolves once every byte written so far has been parsed, with the visible screen. */
  async snapshot(): Promise<ScreenSnapshot> {
    await this.#settled();
    return this.#final ?? this.#capture();
  }

  /** Whether the program switched the cursor keys to application mode (DECCKM), after pending output. */
  async applicationCursorKeys(): Promise<boolean> {
    await this.#settled();
    return this.#disposed ? false : this.#terminal.modes.applicationCursorKeysMode;
  }

  /** Listens to the emulator's replies to terminal queries (DSR, DA…), as a real terminal would send them. */
  onReply(listener: (data: string) => void): Disposable {
    if (this.#disposed) return { dispose() {} };
    return this.#terminal.onData(listener);
  }

  /** Releases the emulator. Pending and later snapshots return the last screen. */
  dispose(): void {
    if (this.#disposed) return;
    this.#queue = [];
    this.#final = this.#capture();
    this.#disposed = true;
    this.#terminal.dispose();
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  #afterPending(fn: () => void): void {
    // An empty write's callback runs after every earlier chunk is parsed and before any later one.
    this.#terminal.write('', fn);
  }

  #settled(): Promise<void> {
    if (this.#disposed) return Promise.resolve();
    this.#flush();
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#waiters.delete(wake);
        resolve();
      };
      this.#waiters.add(wake);
      this.#afterPending(wake);
    });
  }

  #capture(): ScreenSnapshot {
    const terminal = this.#terminal;
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
