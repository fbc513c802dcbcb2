/**
 * The plumbing every `TerminalProcess` shares, defined once for all drivers (the local PTY, an SSH
 * channel, the fake driver of the tests): data and exit listeners, output that arrives before anyone
 * listens, an exit that fires once and only after every byte was delivered (replayed to a late `onExit`),
 * refusal of writes after the end, and write deadlines on an injected clock.
 */

import type { Clock, TimerHandle } from './clock.js';
import type { Disposable, ExitInfo, KillReport, TerminalProcess, TreeKillOptions } from './driver.js';
import { ConchError, ErrorCode } from './errors.js';
import { hint, verb } from './hint.js';

const encoder = new TextEncoder();

/** The error of a write to a terminal that has exited (or was disposed). */
export function terminalExitedError(): ConchError {
  return new ConchError(ErrorCode.COMMAND_FINISHED, 'The terminal has exited; it takes no input.');
}

/** The error of a write the terminal did not take within its deadline. */
export function writeTimeoutError(deadlineMs: number): ConchError {
  return new ConchError(
    ErrorCode.WRITE_TIMEOUT,
    `The terminal did not accept input within ${deadlineMs} ms.`,
    {
      hint: hint`The program stopped reading its input. Use ${verb('sendControl')} ctrl+c or ${verb('killProcess')}.`,
    },
  );
}

/**
 * Base of a driver's terminal process (see the module doc). A driver feeds it with {@link deliver} and
 * {@link deliverExit}, writes in {@link writeBytes} (with {@link withWriteDeadline} when the write
 * completes later), and releases its own resources in {@link disposeResources}.
 */
export abstract class TerminalProcessBase implements TerminalProcess {
  abstract readonly pid: number | undefined;
  /** The clock write deadlines run on. */
  protected readonly clock: Clock;
  private readonly dataListeners = new Set<(chunk: Uint8Array) => void>();
  private readonly exitListeners = new Set<(info: ExitInfo) => void>();
  /** Output that came before the first data listener (as bytes wait in a terminal's buffer); then undefined. */
  private unread: Uint8Array[] | undefined = [];
  private exitInfo: ExitInfo | undefined;
  private isDisposed = false;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** True once the process has ended (its exit may still wait for unread output to be delivered). */
  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** How the process ended, once it has. */
  protected get exitedWith(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /** True once {@link dispose} ran. */
  protected get disposed(): boolean {
    return this.isDisposed;
  }

  /** Hands output to the listeners (kept until the first one attaches; dropped after disposal). */
  protected deliver(chunk: Uint8Array): void {
    if (this.isDisposed || chunk.length === 0) return;
    if (this.unread) {
      this.unread.push(chunk);
      return;
    }
    for (const listener of [...this.dataListeners]) listener(chunk);
  }

  /** Records the end (the first one counts) and fires it once every byte before it was delivered. */
  protected deliverExit(info: ExitInfo): void {
    if (this.exitInfo) return;
    this.exitInfo = info;
    this.fireExit();
  }

  private fireExit(): void {
    const info = this.exitInfo;
    if (!info || (this.unread && this.unread.length > 0)) return;
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const listener of listeners) listener(info);
  }

  onData(listener: (chunk: Uint8Array) => void): Disposable {
    this.dataListeners.add(listener);
    const unread = this.unread;
    if (unread) {
      this.unread = undefined;
      for (const chunk of unread) listener(chunk);
      this.fireExit();
    }
    return { dispose: () => this.dataListeners.delete(listener) };
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    const info = this.exitInfo;
    if (info && !(this.unread && this.unread.length > 0)) {
      queueMicrotask(() => listener(info));
      return { dispose: () => {} };
    }
    this.exitListeners.add(listener);
    return { dispose: () => this.exitListeners.delete(listener) };
  }

  write(data: string | Uint8Array, deadlineMs: number): Promise<void> {
    if (this.exitInfo || this.isDisposed) return Promise.reject(terminalExitedError());
    return this.writeBytes(typeof data === 'string' ? encoder.encode(data) : data, deadlineMs);
  }

  /** Writes to the terminal (it has not exited); rejects with {@link writeTimeoutError} at the deadline. */
  protected abstract writeBytes(bytes: Uint8Array, deadlineMs: number): Promise<void>;

  /**
   * A write that completes later: `start` begins it and calls `done` once the terminal took the bytes (or
   * with an error); it returns what abandons the write (drops the bytes the terminal has not taken), which
   * runs only when the deadline passes first; the write then rejects with {@link writeTimeoutError}.
   */
  protected withWriteDeadline(
    deadlineMs: number,
    start: (done: (error?: unknown) => void) => () => void,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let timer: TimerHandle | undefined;
      let abandon: (() => void) | undefined;
      const done = (error?: unknown) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      timer = this.clock.setTimeout(() => {
        if (settled) return;
        abandon?.();
        done(writeTimeoutError(deadlineMs));
      }, deadlineMs);
      abandon = start(done);
    });
  }

  abstract resize(cols: number, rows: number): void;
  abstract signal(signal: string): Promise<void>;
  abstract kill(options: TreeKillOptions): Promise<KillReport>;

  /**
   * The end of every driver's `killJob`: when the kill found nothing to signal while the terminal still
   * runs, the job was the shell itself running a builtin (such as `read`), so it is interrupted with
   * Ctrl+C, as a person would; otherwise `report` stands.
   */
  protected async interruptBuiltinJob(report: KillReport): Promise<KillReport> {
    if (report.result !== 'already_exited' || this.hasExited) return report;
    await this.write('\x03', 1000).catch(() => {});
    return { result: 'killed', survivors: [] };
  }

  /** Releases every resource: listeners and unread output here, the driver's own in {@link disposeResources}. */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.dataListeners.clear();
    this.unread = undefined;
    this.disposeResources();
  }

  /** The driver's part of {@link dispose} (runs once). */
  protected abstract disposeResources(): void;
}
