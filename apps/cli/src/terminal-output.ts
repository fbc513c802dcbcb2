/**
 * Human output of the CLI: colour only on a TTY and never with `NO_COLOR`, a spinner with the elapsed
 * time (and the newest output line) on stderr while a call waits, plain tables, and the one escape of
 * agent-controlled text ({@link escapeControls}) that every table, status line and message goes through.
 */

/**
 * Characters that a terminal acts on instead of showing, or that reorder what it shows: C0 controls
 * (ESC, CR, BEL, …), DEL, C1 controls (U+0080–U+009F; U+009B is a CSI, U+009D an OSC), the bidirectional
 * overrides and isolates, and the line and paragraph separators.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** How {@link escapeControls} treats line ends. */
export interface EscapeOptions {
  /**
   * `keep`: newlines stay (a message of several lines; tabs stay too); `mark` (default): a newline with the
   * blanks around it becomes ` ↵ ` and a tab `\t` (a table cell or a status line stays one line).
   */
  newlines?: 'keep' | 'mark';
}

/**
 * Agent-controlled text (command texts, session names, cwds, error messages, OpenCode's answer) made safe
 * for a person's terminal: every character of {@link CONTROLS} is shown as a visible escape (`\x1b`,
 * `\x9b`, `\u202e`), so that the text cannot move the cursor, rewrite rows, set the window title or write
 * the clipboard (OSC 52). Not for a command's own output stream (`conch exec` prints that as the program
 * printed it, like a terminal would).
 */
export function escapeControls(text: string, options: EscapeOptions = {}): string {
  const keep = options.newlines === 'keep';
  const lines = keep ? text.replace(/\r\n/g, '\n') : text.replace(/[ \t]*\r?\n[ \t]*/g, ' ↵ ');
  return lines.replace(CONTROLS, (c) => {
    if (keep && (c === '\n' || c === '\t')) return c;
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON for a person's terminal: `JSON.stringify`, with the characters of {@link CONTROLS} that it leaves
 * as they are (C1, bidirectional controls, separators) written as `\uXXXX` escapes: the same JSON value.
 */
export function terminalSafeJson(value: unknown): string {
  // The only raw control JSON.stringify writes is the newline of its own indentation.
  return JSON.stringify(value, null, 2).replace(CONTROLS, (c) =>
    c === '\n' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Whether a stream should get colour: a TTY, and `NO_COLOR` unset or empty. */
export function colourFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/** ANSI styles that collapse to plain text when colour is off. */
export interface Styles {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

/** The styles for a stream (see {@link colourFor}). */
export function stylesFor(stream: NodeJS.WriteStream): Styles {
  const on = colourFor(stream);
  const wrap = (open: number, close: number) => (text: string) =>
    on ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    dim: wrap(2, 22),
    bold: wrap(1, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
  };
}

/**
 * A table: one header row, then rows; columns padded to their widest cell. Every cell is escaped
 * ({@link escapeControls}): one table row is one line, whatever the text.
 */
export function formatTable(header: readonly string[], rawRows: readonly (readonly string[])[]): string {
  const rows = rawRows.map((row) => row.map((cell) => escapeControls(cell)));
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The spinners drawing now (paused while the person is asked a question). */
const spinning = new Set<{ pause(): void; resume(): void }>();

/** Runs `work` (a question on the terminal) with every spinner paused and its line cleared. */
export async function withSpinnersPaused<T>(work: () => Promise<T>): Promise<T> {
  const paused = [...spinning];
  for (const spinner of paused) spinner.pause();
  try {
    return await work();
  } finally {
    for (const spinner of paused) spinner.resume();
  }
}

/** A spinner on stderr; does nothing unless stderr is a TTY. */
export interface Spinner {
  /** Shows the newest output line next to the elapsed time. */
  update(line: string): void;
  /** Clears the spinner line. */
  stop(): void;
}

/** Starts a spinner labelled `label` on stderr (a no-op when stderr is not a TTY). */
export function startSpinner(label: string, stream: NodeJS.WriteStream = process.stderr): Spinner {
  if (!stream.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  let frame = 0;
  let latest = '';
  let paused = false;
  const styles = stylesFor(stream);
  const draw = () => {
    if (paused) return;
    const elapsed = ((Date.now() - started) / 1000).toFixed(1);
    const width = (stream.columns ?? 80) - label.length - elapsed.length - 8;
    const tail = latest.length > width ? `${latest.slice(0, Math.max(0, width - 1))}…` : latest;
    stream.write(
      `\r\u001b[2K${FRAMES[frame++ % FRAMES.length]} ${label} ${styles.dim(`${elapsed}s`)} ${styles.dim(tail)}`,
    );
  };
  const timer = setInterval(draw, 100);
  const control = {
    pause() {
      paused = true;
      stream.write('\r\u001b[2K');
    },
    resume() {
      paused = false;
      draw();
    },
  };
  spinning.add(control);
  draw();
  return {
    update(line) {
      latest = escapeControls(line.trim());
      draw();
    },
    stop() {
      clearInterval(timer);
      spinning.delete(control);
      if (!paused) stream.write('\r\u001b[2K');
    },
  };
}
