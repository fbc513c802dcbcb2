/**
 * XtermScreenRenderer: the core's `ScreenRenderer` with a real terminal emulator (`@xterm/headless`),
 * for the `screen` view of SPEC §4 (how an agent reads vim, htop, less and menus).
 */
import type { Disposable, ScreenFactory, ScreenRenderer, ScreenSnapshot } from '@conch/core';
import xterm from '@xterm/headless';

const { Terminal } = xterm;
type XtermTerminal = InstanceType<typeof Terminal>;

/** Largest accepted number of columns or rows (LESSONS 9: cap them). */
export const MAX_SCREEN_DIMENSION = 1000;

/** Default scrollback of the emulator, in lines (only the visible screen is reported). */
export const DEFAULT_SCREEN_SCROLLBACK = 1000;

/** Bytes waiting to be parsed beyond which new output is dropped (xterm itself throws at 50 MB). */
export const MAX_PENDING_SCREEN_BYTES = 16 * 1024 * 1024;

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
  #pendingBytes = 0;
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

  /** Bytes dropped because the emulator fell more than {@link MAX_PENDING_SCREEN_BYTES} behind. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** Feeds terminal output. Ignored after {@link dispose}. */
  write(chunk: Uint8Array): void {
    if (this.#disposed || chunk.length === 0) return;
    if (this.#pendingBytes + chunk.length > MAX_PENDING_SCREEN_BYTES) {
      this.#droppedBytes += chunk.length;
      return;
    }
    const size = chunk.length;
    this.#pendingBytes += size;
    // xterm may keep the buffer until it parses it: hand it a copy the caller cannot reuse.
    this.#terminal.write(chunk.slice(), () => {
      this.#pendingBytes -= size;
    });
  }

  /** Resizes the screen (clamped to 1..1000) after the bytes already written are parsed. */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    const c = clampScreenDimension(cols, this.#terminal.cols);
    const r = clampScreenDimension(rows, this.#terminal.rows);
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
