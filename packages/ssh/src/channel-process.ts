/**
 * One SSH exec channel with a pseudo-terminal, as the core's `TerminalProcess`: bytes out (after the
 * start marker that carries the remote PID), an exit that fires once after every byte (a channel that
 * closes without an exit status is `lost`, never success), writes that respect the channel's flow control
 * and reject with `WRITE_TIMEOUT` at their deadline, resizes, signals, and remote tree kills.
 */

import {
  type CommandKillOptions,
  ConchError,
  createRealClock,
  decideInputWait,
  ErrorCode,
  type EscapedScan,
  type ExitInfo,
  type InputWaitEvidence,
  type KillReport,
  TerminalProcessBase,
  type TreeKillOptions,
  terminalExitedError,
} from '@conch/core';
import {
  COMMAND_MARKER,
  type HostScripts,
  markerEntry,
  normalizeSignal,
  type ProbeReport,
  SESSION_MARKER,
  START_MARKER_OSC,
} from '@conch/core/host';
import type { ClientChannel } from 'ssh2';

/** What a channel process needs from its driver: the host scripts, and the link's state. */
export interface ChannelHost {
  /** The host scripts, run on their own channels of the driver's connections. */
  readonly scripts: HostScripts;
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

/** How long a probe's report is reused for `foregroundProgram()` after an input-wait probe. */
const PROBE_REUSE_MS = 1000;

/** How the start of a channel went. */
export type StartOutcome = { ok: true } | { ok: false; reason: 'cwd' | 'program' | 'closed' };

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
  private lastProbe: { at: number; report: ProbeReport } | undefined;

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
    void this.host.scripts.signalForeground(pid, name).catch(() => {
      const key = SIGNAL_KEYS[name];
      if (key) void this.write(key, 1000).catch(() => {});
    });
  }

  override kill(options: TreeKillOptions): Promise<KillReport> {
    const markers: string[] = [];
    if (options.commandId) markers.push(markerEntry(COMMAND_MARKER, options.commandId));
    if (options.sessionId) markers.push(markerEntry(SESSION_MARKER, options.sessionId));
    return this.remoteKill('tree', options.signal, options.graceMs, markers);
  }

  killEscaped(options: CommandKillOptions): Promise<KillReport> {
    // Tree mode with no root: only the escaped processes and their descendants.
    return this.remoteKill(
      'tree',
      options.signal,
      options.graceMs,
      [markerEntry(COMMAND_MARKER, options.commandId)],
      true,
    );
  }

  async escapedProcesses(commandIds: readonly string[]): Promise<EscapedScan> {
    if (commandIds.length === 0 || this.host.lost) return { escaped: new Map(), forks: [] };
    return this.host.scripts.escapedProcesses(this.remotePid, commandIds);
  }

  async killJob(options: CommandKillOptions): Promise<KillReport> {
    return this.interruptBuiltinJob(
      await this.remoteKill('job', options.signal, options.graceMs, [
        markerEntry(COMMAND_MARKER, options.commandId),
      ]),
    );
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
    const root = markedOnly ? undefined : this.remotePid;
    if (mode === 'tree' && root === undefined && markers.length === 0) {
      if (this.hasExited) return { result: 'already_exited', survivors: [] };
      this.dispose();
      return { result: 'stop_unconfirmed', survivors: [] };
    }
    let report: KillReport | 'unsupported';
    try {
      report = await this.host.scripts.kill({ mode, signal: name, graceMs, root, markers });
    } catch {
      // No helper channel (the server's channel limit, and no extra connection possible). Escaped processes
      // alone (no root) cannot be reached without one; never fall back to hanging up this terminal for them.
      if (markedOnly) return { result: 'stop_unconfirmed', survivors: [] };
      return this.fallbackKill(mode, name, graceMs);
    }
    if (report !== 'unsupported') return report;
    return markedOnly
      ? { result: 'stop_unconfirmed', survivors: [] }
      : this.fallbackKill(mode, name, graceMs);
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

  /** A fresh report of the probe script about the terminal's foreground group, or undefined. */
  private async probe(): Promise<ProbeReport | undefined> {
    const pid = this.remotePid;
    if (pid === undefined || this.host.lost) return undefined;
    try {
      const report = await this.host.scripts.probe(pid);
      this.lastProbe = { at: Date.now(), report };
      return report;
    } catch {
      return undefined;
    }
  }

  /** The last probe's report when it is at most {@link PROBE_REUSE_MS} old, else a fresh one. */
  private async recentProbe(): Promise<ProbeReport | undefined> {
    const last = this.lastProbe;
    if (last && Date.now() - last.at <= PROBE_REUSE_MS) return last.report;
    return this.probe();
  }

  async inputWaitEvidence(): Promise<InputWaitEvidence> {
    if (this.hasExited || this.disposed) return 'no';
    const report = await this.probe();
    return report === undefined ? 'unknown' : decideInputWait(report.facts);
  }

  async foregroundIsOwn(): Promise<boolean | undefined> {
    if (this.hasExited || this.disposed) return undefined;
    const report = await this.probe();
    if (report === undefined || report.fg === undefined) return undefined;
    if (report.rootGroup === undefined || !Number.isInteger(report.rootGroup)) return undefined;
    return report.fg === report.rootGroup;
  }

  async foregroundProgram(): Promise<string | undefined> {
    if (this.hasExited || this.disposed) return undefined;
    const report = await this.recentProbe();
    return report !== undefined && report.fg !== report.rootGroup ? report.comm : undefined;
  }

  async foregroundPrograms(): Promise<string[] | undefined> {
    if (this.hasExited || this.disposed) return undefined;
    return (await this.probe())?.names;
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
