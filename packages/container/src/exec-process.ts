/**
 * One container exec with a terminal, as the core's `TerminalProcess`: a session shell, or an isolated or
 * background command. What every terminal on a host reached through a channel shares (the start marker
 * carrying the PID inside the container, probes, tree kills and signals through the host scripts) comes
 * from `@conch/core/host`; here is the exec: bytes out of the hijacked stream, writes with flow control
 * and deadlines, resizes through the API, and the end.
 *
 * The end: when the stream ends, the exec's exit code comes from the engine (`exec.inspect`). A container
 * that is no longer running, an engine that cannot be asked, or an exec still running after its stream
 * ended (the engine restarted) make the end `lost`. The engine reports a process ended by a signal as
 * status 128+N, as a shell does; conch reads such a status as the signal.
 *
 * Closing an exec's stream does not end its process (unlike an SSH channel): `dispose` of a terminal
 * still running kills its tree through the host scripts.
 */

import type { Duplex } from 'node:stream';
import { createRealClock, type ExitInfo, type KillReport, terminalExitedError } from '@conch/core';
import { signalFromStatus } from '@conch/core/engine';
import { HostTerminalProcess, type TerminalHost } from '@conch/core/host';

/** The clock of write deadlines and probe reuse (real time). */
const REAL_CLOCK = createRealClock();

/** What an exec process needs from its driver. */
export interface ExecHost extends TerminalHost {
  /** How the exec ended, asked of the engine once its stream has ended. */
  exitOf(): Promise<ExitInfo>;
  /** Resizes the exec's terminal through the engine. */
  resize(cols: number, rows: number): Promise<void>;
  /** Called once when the process is disposed or has exited (bookkeeping). */
  release(proc: ContainerExecProcess): void;
  /**
   * The program `pid`'s state seen from the container's /proc: still there, ended and not yet reaped (with
   * its wait status), or gone.
   */
  processState(pid: number): Promise<ProcessState>;
}

/** A program's state in the container's /proc (`status`: the wait status of one that ended, unreaped). */
export type ProcessState = { state: 'running' } | { state: 'ended'; status: number } | { state: 'gone' };

/** How often a terminal whose input is stuck is checked for its program's end. */
const STUCK_WATCH_MS = 250;

/** How a wait status (`waitpid`'s form) reads. */
function exitInfoOfWaitStatus(status: number): ExitInfo {
  const signal = status & 0x7f;
  if (signal === 0) return { exitCode: (status >> 8) & 0xff, signal: null };
  return { exitCode: null, signal: signalFromStatus(128 + signal) };
}

/** How an exit status of the engine reads: 128+N is signal N (as a shell reports it), anything else a code. */
export function exitInfoOf(status: number): ExitInfo {
  const signal = signalFromStatus(status);
  return signal === null ? { exitCode: status, signal: null } : { exitCode: null, signal };
}

/** A terminal exec in a container (see the module doc). */
export class ContainerExecProcess extends HostTerminalProcess {
  private readonly stream: Duplex;
  private readonly execHost: ExecHost;
  private ended = false;
  /** Input waits here while a resize is on its way (a resize takes effect before any later input). */
  private inputGate: Promise<void> | undefined;
  /** True while a watch of a stuck terminal runs (see {@link watchStuck}). */
  private watching = false;

  constructor(stream: Duplex, host: ExecHost, nonce: string) {
    super(REAL_CLOCK, host, nonce);
    this.stream = stream;
    this.execHost = host;
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
    const end = () => void this.onStreamEnd();
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
  }

  private async onStreamEnd(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.endOfOutput();
    const info = this.host.lost
      ? { exitCode: null, signal: null, lost: true }
      : await this.execHost.exitOf().catch(() => ({ exitCode: null, signal: null, lost: true }));
    this.deliverExit(info);
    this.execHost.release(this);
  }

  /** Ends the terminal as lost (the container or the engine went away; its stream may never end). */
  markLost(): void {
    if (this.hasExited) return;
    this.ended = true;
    this.abandonStart();
    this.deliverExit({ exitCode: null, signal: null, lost: true });
    this.execHost.release(this);
  }

  /** Runs `step` after every resize and write already asked for (the engine's resizes are requests of their own). */
  private afterGate(step: () => void | Promise<void>): void {
    const gate = this.inputGate;
    if (gate === undefined) {
      const result = step();
      if (result === undefined) return;
      this.holdGate(result);
      return;
    }
    this.holdGate(gate.then(step));
  }

  private holdGate(pending: Promise<void>): void {
    const gate = pending.catch(() => {});
    this.inputGate = gate;
    void gate.then(() => {
      if (this.inputGate === gate) this.inputGate = undefined;
    });
  }

  protected override writeBytes(bytes: Uint8Array, deadlineMs: number): Promise<void> {
    const stream = this.stream;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const written = this.withWriteDeadline(deadlineMs, (done) => {
      let abandoned = false;
      const doWrite = () => {
        if (abandoned) return;
        if (this.hasExited) return done(terminalExitedError());
        // The callback runs once the socket took the bytes; a full socket waits for 'drain'.
        stream.write(buffer, (error) => done(error ?? undefined));
      };
      this.afterGate(() => {
        if (stream.writableNeedDrain) stream.once('drain', doWrite);
        else doWrite();
      });
      return () => {
        abandoned = true;
        stream.off('drain', doWrite);
      };
    });
    written.catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code === 'WRITE_TIMEOUT') this.watchStuck();
    });
    return written;
  }

  override resize(cols: number, rows: number): void {
    if (this.hasExited || this.disposed) return;
    this.afterGate(() => this.execHost.resize(cols, rows));
  }

  /**
   * Input the program does not read can wedge the engine: Podman's monitor blocks writing it into the
   * terminal and then neither reaps the program nor ends the exec's stream when it exits. Once a write has
   * timed out, the program's end is therefore also watched in the container's /proc, and read from there
   * (its wait status, while it is unreaped) when the stream does not end.
   */
  private watchStuck(): void {
    const pid = this.pid;
    if (this.watching || this.ended || pid === undefined) return;
    this.watching = true;
    const check = async () => {
      if (this.ended || this.disposed || this.host.lost) return;
      const seen = await this.execHost.processState(pid).catch(() => undefined);
      if (this.ended || this.disposed) return;
      if (seen?.state === 'ended') {
        this.ended = true;
        this.endOfOutput();
        this.deliverExit(exitInfoOfWaitStatus(seen.status));
        this.execHost.release(this);
        this.stream.destroy();
        return;
      }
      if (seen?.state === 'gone') {
        // Reaped: the engine saw the end, and the stream's end follows with the status.
        return;
      }
      setTimeout(() => void check(), STUCK_WATCH_MS).unref();
    };
    void check();
  }

  /**
   * Without a helper shell nothing but the terminal is left: Ctrl+C for a job; a tree cannot be reached
   * (closing the stream does not end an exec), so its stop is unconfirmed.
   */
  protected override async fallbackKill(mode: 'tree' | 'job'): Promise<KillReport> {
    if (mode === 'job') {
      await this.write('\x03', 1000).catch(() => {});
      return { result: 'stop_unconfirmed', survivors: [] };
    }
    if (this.hasExited) return { result: 'already_exited', survivors: [] };
    return { result: 'stop_unconfirmed', survivors: [] };
  }

  protected override disposeResources(): void {
    if (!this.hasExited && !this.host.lost) {
      // The stream's end would not end the program: hang it up and kill what is left of its tree.
      void this.kill({ signal: 'SIGHUP', graceMs: 1000 }).catch(() => {});
    }
    try {
      this.stream.end();
      this.stream.destroy();
    } catch {
      // already closed
    }
    this.execHost.release(this);
  }
}
