/**
 * One SSH exec channel with a pseudo-terminal, as the core's `TerminalProcess`: bytes out (after the
 * start marker that carries the remote PID), an exit that fires once after every byte (a channel that
 * closes without an exit status is `lost`, never success), writes that respect the channel's flow control
 * and reject with `WRITE_TIMEOUT` at their deadline, resizes, signals, and remote tree kills.
 */

import {
  ConchError,
  createRealClock,
  decideInputWait,
  ErrorCode,
  type EscapedScan,
  type ExitInfo,
  type InputWaitEvidence,
  type KillReport,
  parseInputWaitReport,
  TerminalProcessBase,
  terminalExitedError,
} from '@conch/core';
import type { ClientChannel } from 'ssh2';
import {
  ESCAPED_SCRIPT,
  KILL_SCRIPT,
  PROBE_SCRIPT,
  parseEscapedReport,
  SIGNAL_SCRIPT,
  START_MARKER_OSC,
} from './remote-scripts.js';

/** What a channel process needs from its driver: running small remote scripts, and the link's state. */
export interface ChannelHost {
  /** Runs a remote POSIX-sh script (no PTY) and returns its stdout, or throws. */
  runScript(
    script: string,
    args: readonly string[],
    options: { timeoutMs: number; slotWaitMs: number },
  ): Promise<string>;
  /** True once the connection carrying the channel is gone. */
  readonly lost: boolean;
  /** Called once when the process is disposed or has exited (bookkeeping). */
  release(proc: SshChannelProcess): void;
}

/** Longest stretch of output searched for the start marker before giving up on it. */
const MAX_PRESTART_BYTES = 64 * 1024;

/** Key presses that make the terminal send a signal to its foreground group. */
const SIGNAL_KEYS: Record<string, string> = { SIGINT: '\x03', SIGQUIT: '\x1c', SIGTSTP: '\x1a' };

/** The clock of write deadlines (real time). */
const REAL_CLOCK = createRealClock();

/** How long an input-wait probe result is reused for `foregroundProgram()`. */
const PROBE_REUSE_MS = 1000;

/** How the start of a channel went. */
export type StartOutcome = { ok: true } | { ok: false; reason: 'cwd' | 'program' | 'closed' };

/** Normalises a signal name to `SIGXXX`, or undefined when it is not a plain signal name. */
export function normalizeSignal(signal: string): string | undefined {
  const upper = signal.trim().toUpperCase();
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  return /^SIG[A-Z0-9+-]+$/.test(name) ? name : undefined;
}

/**
 * A remote process on an SSH channel (see the module doc); listeners, the exit (after every byte) and
 * write deadlines come from the core's base.
 */
export class SshChannelProcess extends TerminalProcessBase {
  private remotePid: number | undefined;
  private readonly channel: ClientChannel;
  private readonly host: ChannelHost;
  private readonly startPrefix: Buffer;
  private prestart: Buffer | undefined = Buffer.alloc(0);
  private startResolve: ((outcome: StartOutcome) => void) | undefined;
  /** Resolves when the start marker arrived (or the channel closed before it). */
  readonly started: Promise<StartOutcome>;
  private exitStatus: ExitInfo | undefined;
  private lastProbe: { at: number; evidence: InputWaitEvidence; comm: string | undefined } | undefined;

  constructor(channel: ClientChannel, host: ChannelHost, nonce: string) {
    super(REAL_CLOCK);
    this.channel = channel;
    this.host = host;
    this.startPrefix = Buffer.from(`\x1b]${START_MARKER_OSC};${nonce};`, 'latin1');
    this.started = new Promise((resolve) => {
      this.startResolve = resolve;
    });
    channel.on('data', (chunk: Buffer) => this.onChannelData(chunk));
    channel.stderr.on('data', (chunk: Buffer) => this.onChannelData(chunk));
    channel.on('exit', (code: number | null, signal?: string) => {
      if (typeof code === 'number') this.exitStatus = { exitCode: code, signal: null };
      else if (signal)
        this.exitStatus = { exitCode: null, signal: normalizeSignal(signal) ?? `SIG${signal}` };
    });
    channel.on('error', () => {
      // a channel error ends in 'close'
    });
    channel.on('close', () => this.onClose());
  }

  /** Remote process id (the channel's session leader), once the start marker arrived. */
  get pid(): number | undefined {
    return this.remotePid;
  }

  private resolveStart(outcome: StartOutcome): void {
    const resolve = this.startResolve;
    this.startResolve = undefined;
    resolve?.(outcome);
  }

  private onChannelData(chunk: Buffer): void {
    if (this.prestart === undefined) {
      this.emit(chunk);
      return;
    }
    const buffer = Buffer.concat([this.prestart, chunk]);
    const at = buffer.indexOf(this.startPrefix);
    if (at < 0) {
      if (buffer.length > MAX_PRESTART_BYTES) this.abandonStartMarker(buffer);
      else this.prestart = buffer;
      return;
    }
    const end = buffer.indexOf(0x07, at + this.startPrefix.length);
    if (end < 0) {
      if (buffer.length > MAX_PRESTART_BYTES) this.abandonStartMarker(buffer);
      else this.prestart = buffer;
      return;
    }
    // Output before the marker comes from the remote login shell's start-up files, not the program.
    const body = buffer.subarray(at + this.startPrefix.length, end).toString('latin1');
    const rest = buffer.subarray(end + 1);
    this.prestart = undefined;
    const [kind, value] = body.split(';');
    if (kind === 'pid' && value !== undefined && /^\d+$/.test(value)) {
      this.remotePid = Number(value);
      this.resolveStart({ ok: true });
    } else if (kind === 'err') {
      this.resolveStart({ ok: false, reason: value === 'cwd' ? 'cwd' : 'program' });
    } else {
      this.resolveStart({ ok: true });
    }
    if (rest.length > 0) this.emit(rest);
  }

  /** No marker in sight: deliver everything as output and go on without a PID. */
  private abandonStartMarker(buffer: Buffer): void {
    this.prestart = undefined;
    this.resolveStart({ ok: true });
    this.emit(buffer);
  }

  private emit(chunk: Uint8Array): void {
    this.deliver(chunk);
  }

  private onClose(): void {
    if (this.prestart !== undefined && this.prestart.length > 0) {
      const buffer = this.prestart;
      this.prestart = undefined;
      this.emit(buffer);
    }
    this.prestart = undefined;
    this.resolveStart({ ok: false, reason: 'closed' });
    // No exit status = the link (or sshd) went away: the outcome is unknown, never success.
    this.deliverExit(this.exitStatus ?? { exitCode: null, signal: null, lost: true });
    this.host.release(this);
  }

  /** Ends the channel as lost (the connection died; its close may never arrive). */
  markLost(): void {
    if (this.hasExited) return;
    this.prestart = undefined;
    this.resolveStart({ ok: false, reason: 'closed' });
    this.deliverExit({ exitCode: null, signal: null, lost: true });
    this.host.release(this);
  }

  protected override writeBytes(bytes: Uint8Array, deadlineMs: number): Promise<void> {
    const channel = this.channel;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.withWriteDeadline(deadlineMs, (done) => {
      const doWrite = () => {
        if (this.hasExited) return done(terminalExitedError());
        // The callback runs once the bytes went out within the channel's window (flow control).
        channel.write(buffer, (error) => done(error ?? undefined));
      };
      if (channel.writableNeedDrain) channel.once('drain', doWrite);
      else doWrite();
      return () => channel.off('drain', doWrite);
    });
  }

  override resize(cols: number, rows: number): void {
    if (this.hasExited || this.disposed) return;
    try {
      this.channel.setWindow(rows, cols, 0, 0);
    } catch {
      // closed between the check and the call
    }
  }

  override signal(signal: string): void {
    if (this.hasExited || this.disposed) return;
    const name = normalizeSignal(signal);
    if (!name) return;
    const pid = this.remotePid;
    if (pid === undefined || this.host.lost) {
      // No PID: the SSH signal request (OpenSSH refuses it for root logins), plus the key for INT.
      try {
        this.channel.signal(name.slice(3));
      } catch {
        // closed
      }
      const key = SIGNAL_KEYS[name];
      if (key) void this.write(key, 1000).catch(() => {});
      return;
    }
    void this.host
      .runScript(SIGNAL_SCRIPT, [name.slice(3), String(pid)], { timeoutMs: 10_000, slotWaitMs: 1000 })
      .catch(() => {
        const key = SIGNAL_KEYS[name];
        if (key) void this.write(key, 1000).catch(() => {});
      });
  }

  override kill(options: {
    signal: string;
    graceMs: number;
    commandId?: string;
    sessionId?: string;
  }): Promise<KillReport> {
    const markers: string[] = [];
    if (options.commandId) markers.push(`CONCH_COMMAND_ID=${options.commandId}`);
    if (options.sessionId) markers.push(`CONCH_SESSION_ID=${options.sessionId}`);
    return this.remoteKill('tree', options.signal, options.graceMs, markers);
  }

  killEscaped(options: { signal: string; graceMs: number; commandId: string }): Promise<KillReport> {
    // Tree mode with no root: only the escaped processes and their descendants.
    return this.remoteKill(
      'tree',
      options.signal,
      options.graceMs,
      [`CONCH_COMMAND_ID=${options.commandId}`],
      true,
    );
  }

  async escapedProcesses(commandIds: readonly string[]): Promise<EscapedScan> {
    if (commandIds.length === 0 || this.host.lost) return { escaped: new Map(), forks: [] };
    const root = this.remotePid === undefined ? '' : String(this.remotePid);
    const out = await this.host.runScript(ESCAPED_SCRIPT, [root, ...commandIds], {
      timeoutMs: 10_000,
      slotWaitMs: 1000,
    });
    return parseEscapedReport(out, commandIds, this.remotePid);
  }

  async killJob(options: { signal: string; graceMs: number; commandId: string }): Promise<KillReport> {
    const report = await this.remoteKill('job', options.signal, options.graceMs, [
      `CONCH_COMMAND_ID=${options.commandId}`,
    ]);
    if (report.result === 'already_exited' && !this.hasExited) {
      // Nothing but the shell itself runs the job (a builtin such as `read`): interrupt it.
      await this.write('\x03', 1000).catch(() => {});
      return { result: 'killed', survivors: [] };
    }
    return report;
  }

  private async remoteKill(
    mode: 'tree' | 'job',
    signal: string,
    graceMs: number,
    markers: string[],
    markedOnly = false,
  ): Promise<KillReport> {
    const name = normalizeSignal(signal);
    if (!name) throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid signal: ${JSON.stringify(signal)}.`);
    if (this.host.lost) return { result: 'stop_unconfirmed', survivors: [] };
    const pid = markedOnly ? undefined : this.remotePid;
    if (mode === 'tree' && pid === undefined && markers.length === 0) {
      if (this.hasExited) return { result: 'already_exited', survivors: [] };
      this.dispose();
      return { result: 'stop_unconfirmed', survivors: [] };
    }
    const ticks = Math.max(0, Math.round(graceMs / 100));
    let out: string;
    try {
      out = await this.host.runScript(
        KILL_SCRIPT,
        [mode, name.slice(3), String(ticks), pid === undefined ? '' : String(pid), ...markers],
        { timeoutMs: graceMs + 15_000, slotWaitMs: 2000 },
      );
    } catch {
      // No helper channel (the server's channel limit, and no extra connection possible). Escaped processes
      // alone (no root) cannot be reached without one; never fall back to hanging up this terminal for them.
      if (markedOnly) return { result: 'stop_unconfirmed', survivors: [] };
      return this.fallbackKill(mode, name, graceMs);
    }
    const line = out.split('\n').find((l) => l.startsWith('CONCH_KILL ')) ?? '';
    const [, result, ...rest] = line.trim().split(/\s+/);
    if (result === 'unsupported')
      return markedOnly
        ? { result: 'stop_unconfirmed', survivors: [] }
        : this.fallbackKill(mode, name, graceMs);
    if (result === 'already_exited') return { result: 'already_exited', survivors: [] };
    if (result === 'killed') return { result: 'killed', survivors: [] };
    return {
      result: 'stop_unconfirmed',
      survivors: rest.map(Number).filter((n) => Number.isInteger(n) && n > 0),
    };
  }

  /**
   * Kills without a helper channel: the SSH signal request to the channel's process (OpenSSH refuses it
   * for root logins), then closing the channel, which hangs up its terminal. Escaped processes
   * cannot be reached this way.
   */
  private async fallbackKill(mode: 'tree' | 'job', name: string, graceMs: number): Promise<KillReport> {
    if (mode === 'job') {
      await this.write('\x03', 1000).catch(() => {});
      return { result: 'stop_unconfirmed', survivors: [] };
    }
    if (this.hasExited) return { result: 'already_exited', survivors: [] };
    const gone = new Promise<void>((resolve) => this.onExit(() => resolve()));
    const within = (ms: number) =>
      Promise.race([gone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    try {
      this.channel.signal(name.slice(3));
    } catch {
      // closed
    }
    if (await within(graceMs)) return { result: 'killed', survivors: [] };
    try {
      this.channel.close();
    } catch {
      // closed
    }
    return (await within(2000))
      ? { result: 'killed', survivors: [] }
      : { result: 'stop_unconfirmed', survivors: [] };
  }

  async inputWaitEvidence(): Promise<InputWaitEvidence> {
    if (this.hasExited || this.disposed) return 'no';
    return (await this.probe())?.evidence ?? 'unknown';
  }

  async foregroundIsOwn(): Promise<boolean | undefined> {
    if (this.hasExited || this.disposed) return undefined;
    return (await this.probe())?.own;
  }

  /** One run of the remote probe (undefined when it cannot run); remembered for `foregroundProgram`. */
  private async probe(): Promise<{ evidence: InputWaitEvidence; own: boolean | undefined } | undefined> {
    const pid = this.remotePid;
    if (pid === undefined || this.host.lost) return undefined;
    try {
      const report = parseInputWaitReport(
        await this.host.runScript(PROBE_SCRIPT, [String(pid)], { timeoutMs: 5000, slotWaitMs: 0 }),
      );
      const evidence = decideInputWait(report.facts);
      const own =
        report.fg === undefined || report.rootGroup === undefined || !Number.isInteger(report.rootGroup)
          ? undefined
          : report.fg === report.rootGroup;
      const comm = report.fg !== undefined && report.fg !== report.rootGroup ? report.comm : undefined;
      this.lastProbe = { at: Date.now(), evidence, comm };
      return { evidence, own };
    } catch {
      return undefined;
    }
  }

  async foregroundProgram(): Promise<string | undefined> {
    if (this.hasExited || this.disposed) return undefined;
    if (!this.lastProbe || Date.now() - this.lastProbe.at > PROBE_REUSE_MS) await this.inputWaitEvidence();
    return this.lastProbe?.comm;
  }

  protected override disposeResources(): void {
    if (!this.hasExited) {
      try {
        // Closing the channel closes the remote PTY: its processes get SIGHUP.
        this.channel.close();
      } catch {
        // already closed
      }
    }
    this.host.release(this);
  }
}
