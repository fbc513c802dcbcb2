/**
 * Human output of the CLI: colour only on a TTY and never with `NO_COLOR`, a spinner with the elapsed
 * time (and the newest output line) on stderr while a call waits, and plain tables.
 */

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

/** A table: one header row, then rows; columns padded to their widest cell. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
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
      latest = line.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
      draw();
    },
    stop() {
      clearInterval(timer);
      spinning.delete(control);
      if (!paused) stream.write('\r\u001b[2K');
    },
  };
}
