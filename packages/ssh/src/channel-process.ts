/**
 * One SSH exec channel with a pseudo-terminal, as the core's `TerminalProcess`: what every terminal on a
 * host reached through a channel shares (the start marker carrying the remote PID, probes, tree kills and
 * signals through the host scripts) comes from `@conch/core/host`'s `HostTerminalProcess`; here is the
 * channel: bytes out, an exit that fires once after every byte (a channel that closes without an exit
 * status is `lost`, never success), writes that respect the channel's flow control and reject with
 * `WRITE_TIMEOUT` at their deadline, resizes, the SSH signal request, and hanging up.
 */

import { createRealClock, type ExitInfo, type KillReport, terminalExitedError } from '@conch/core';
import { HostTerminalProcess, normalizeSignal, type TerminalHost } from '@conch/core/host';
import type { ClientChannel } from 'ssh2';

/** What a channel process needs from its driver: the host scripts, and the link's state. */
export interface ChannelHost extends TerminalHost {
  /** Called once when the process is disposed or has exited (bookkeeping). */
  release(proc: SshChannelProcess): void;
}

/** The clock of write deadlines (real time). */
const REAL_CLOCK = createRealClock();

/**
 * A remote process on an SSH channel (see the module doc); listeners, the exit (after every byte) and
 * write deadlines come from the core's base.
 */
export class SshChannelProcess extends HostTerminalProcess {
  private readonly channel: ClientChannel;
  private readonly channelHost: ChannelHost;
  private exitStatus: ExitInfo | undefined;

  constructor(channel: ClientChannel, host: ChannelHost, nonce: string) {
    super(REAL_CLOCK, host, nonce);
    this.channel = channel;
    this.channelHost = host;
    channel.on('data', (chunk: Buffer) => this.receive(chunk));
    channel.stderr.on('data', (chunk: Buffer) => this.receive(chunk));
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

  private onClose(): void {
    this.endOfOutput();
    // No exit status = the link (or sshd) went away: the outcome is unknown, never success.
    this.deliverExit(this.exitStatus ?? { exitCode: null, signal: null, lost: true });
    this.channelHost.release(this);
  }

  /** Ends the channel as lost (the connection died; its close may never arrive). */
  markLost(): void {
    if (this.hasExited) return;
    this.abandonStart();
    this.deliverExit({ exitCode: null, signal: null, lost: true });
    this.channelHost.release(this);
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

  /** The SSH signal request (OpenSSH refuses it for root logins), plus the key for INT. */
  protected override signalDirectly(name: string): Promise<void> {
    try {
      this.channel.signal(name.slice(3));
    } catch {
      // closed
    }
    return super.signalDirectly(name);
  }

  /**
   * Kills without a helper channel: the SSH signal request to the channel's process (OpenSSH refuses it
   * for root logins), then closing the channel, which hangs up its terminal. Escaped (marked) processes
   * cannot be reached this way.
   */
  protected override async fallbackKill(
    mode: 'tree' | 'job',
    name: string,
    graceMs: number,
  ): Promise<KillReport> {
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

  protected override disposeResources(): void {
    if (!this.hasExited) {
      try {
        // Closing the channel closes the remote PTY: its processes get SIGHUP.
        this.channel.close();
      } catch {
        // already closed
      }
    }
    this.channelHost.release(this);
  }
}
