/**
 * A process on a real pseudo-terminal (node-pty), as the core's `TerminalProcess`: bytes out, writes
 * with deadlines, kernel evidence of terminal reads, tree kills, and release of every fd on every exit
 * path.
 */

import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import {
  type CommandKillOptions,
  createRealClock,
  decideInputWait,
  type EscapedScan,
  type InputWaitEvidence,
  type KillReport,
  TerminalProcessBase,
  type TreeKillOptions,
} from '@conch/core';
import { foregroundGroupOf, type ProcessFacts } from '@conch/core/host';
import { processFacts } from '@conch/node';
import type { IPty } from '@lydell/node-pty';
import { findEscaped, killTree } from './tree-killer.js';

/** Signal names by number for node-pty's numeric exit signals. */
const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  6: 'SIGABRT',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
};

/** The clock of write deadlines (real time). */
const REAL_CLOCK = createRealClock();

/** Internals of node-pty's unix terminal that write deadlines and the drain need (guarded at runtime). */
interface PtyInternals {
  _fd?: number;
  _writeStream?: { _writeQueue?: unknown[]; dispose?: () => void };
  _socket?: { destroy: (error?: Error) => unknown };
}

/** The longest time the drain waits for its sentinel (a terminal whose output is stopped never shows it). */
const DRAIN_LIMIT_MS = 5000;

/** Resolves after the event loop has polled for I/O at least once more (two check phases). */
function afterNextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Every byte before the end: node-pty's read of the terminal stalls or fails once the program's side of the
 * terminal closes, and it destroys its reader 200 ms after the program's exit, so the tail of a fast
 * program's output was lost. This holds the terminal's program side open for as long as the program runs;
 * when node-pty is about to destroy its reader (the program has exited), it writes a unique sentinel to
 * the program side and lets the reader go only once the sentinel has come through: the terminal is FIFO,
 * so everything the program wrote came before it.
 */
class DrainGuard {
  private slave: number | undefined;
  private readonly sentinel = Buffer.from(`\x1b]7790;conch-drained-${randomBytes(8).toString('hex')}\x07`);
  private sentinelSent = false;
  private carry: Buffer = Buffer.alloc(0);
  private finished = false;
  private realDestroy: ((error?: Error) => unknown) | undefined;

  constructor(pty: IPty, ptsName: string | undefined) {
    const socket = (pty as unknown as PtyInternals)._socket;
    if (!socket || typeof socket.destroy !== 'function' || ptsName === undefined) return;
    try {
      this.slave = openSync(ptsName, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    } catch {
      return;
    }
    const real = socket.destroy.bind(socket);
    this.realDestroy = real;
    socket.destroy = (error?: Error) => {
      if (error || this.finished || this.slave === undefined) return real(error);
      this.sendSentinel(Date.now());
      return socket;
    };
  }

  /** Passes output through, up to the sentinel (after it, nothing is the program's). */
  filter(chunk: Buffer): Buffer | undefined {
    if (!this.sentinelSent) return chunk;
    if (this.finished) return undefined;
    const all = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const at = all.indexOf(this.sentinel);
    if (at >= 0) {
      this.finish();
      return at > 0 ? all.subarray(0, at) : undefined;
    }
    // Hold back a suffix that may be the start of the sentinel.
    let keep = Math.min(this.sentinel.length - 1, all.length);
    while (keep > 0 && !this.sentinel.subarray(0, keep).equals(all.subarray(all.length - keep))) keep--;
    this.carry = Buffer.from(all.subarray(all.length - keep));
    return all.length - keep > 0 ? all.subarray(0, all.length - keep) : undefined;
  }

  /** Releases the program side and the reader now (disposal, or the drain is over). */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.closeSlave();
    try {
      this.realDestroy?.();
    } catch {
      // already closed
    }
  }

  private sendSentinel(started: number): void {
    if (this.finished || this.slave === undefined) return;
    try {
      writeSync(this.slave, this.sentinel);
      this.sentinelSent = true;
      setTimeout(() => this.finish(), DRAIN_LIMIT_MS).unref();
    } catch (error) {
      // The terminal's buffer is full: try again once the reader made room.
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN' && Date.now() - started < DRAIN_LIMIT_MS) {
        setTimeout(() => this.sendSentinel(started), 5);
      } else {
        this.finish();
      }
    }
  }

  private closeSlave(): void {
    if (this.slave === undefined) return;
    try {
      closeSync(this.slave);
    } catch {
      // closed
    }
    this.slave = undefined;
  }
}

/** A node-pty process (see the module doc); listeners, the exit and write deadlines come from the core's base. */
export class PtyProcess extends TerminalProcessBase {
  /** The terminal's own process (node-pty's child); in a sandbox, the outer bubblewrap. */
  private readonly terminalPid: number | undefined;
  private programPid: number | undefined;
  /** Processes between the terminal and the program (bubblewrap's), never taken for the program's. */
  private supervisors: readonly number[] = [];
  private readonly pty: IPty;
  private readonly ptsName: string | undefined;
  private readonly onDisposed: () => void;
  private readonly owner: string;
  private readonly drain: DrainGuard;
  /** The host's process facts (`/proc` or `ps`), chosen at start. */
  private readonly facts: ProcessFacts = processFacts();

  constructor(pty: IPty, owner: string, onDisposed: () => void) {
    super(REAL_CLOCK);
    this.pty = pty;
    this.owner = owner;
    this.terminalPid = pty.pid;
    this.programPid = pty.pid;
    this.onDisposed = onDisposed;
    this.ptsName = (pty as unknown as { ptsName?: string }).ptsName;
    this.drain = new DrainGuard(pty, this.ptsName);
    pty.onData((data) => {
      const raw = typeof data === 'string' ? Buffer.from(data, 'utf8') : (data as unknown as Buffer);
      const bytes = this.drain.filter(raw);
      if (bytes) this.deliver(bytes);
    });
    // node-pty 1.1 emits exit only after its read socket closed; the drain guard makes that the last byte.
    pty.onExit(({ exitCode, signal }) => {
      const sig = signal ? (SIGNALS[signal] ?? `SIG${signal}`) : null;
      this.deliverExit({ exitCode: sig ? null : exitCode, signal: sig });
    });
  }

  /** The host pid of the program the terminal runs (the shell, or an isolated command's). */
  get pid(): number | undefined {
    return this.programPid;
  }

  /**
   * Names the program when it is not the terminal's own process: a sandboxed program runs under
   * bubblewrap (see `sandbox/sandbox-launcher.ts`). Its host pid is what every probe and kill uses.
   */
  setProgramPid(pid: number, supervisors: readonly number[]): void {
    this.programPid = pid;
    this.supervisors = supervisors;
  }

  protected override writeBytes(data: Uint8Array, deadlineMs: number): Promise<void> {
    const internals = this.pty as unknown as PtyInternals;
    const rest = this.writeNow(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    if (rest === undefined) return Promise.resolve();
    this.pty.write(rest);
    const queue = internals._writeStream?._writeQueue;
    if (!Array.isArray(queue)) return Promise.resolve();
    return this.withWriteDeadline(deadlineMs, (done) => {
      let abandoned = false;
      const started = Date.now();
      const check = () => {
        if (abandoned) return;
        if (queue.length === 0 || this.hasExited) return done();
        // The queue usually drains within a millisecond: poll tightly first, then back off.
        if (Date.now() - started < 20) setImmediate(check);
        else setTimeout(check, 5);
      };
      check();
      // Drop what the program will not read, so node-pty stops retrying (it spins on EAGAIN).
      return () => {
        abandoned = true;
        queue.length = 0;
      };
    });
  }

  /**
   * Writes what the terminal takes at once with one write(2) on its (non-blocking) master fd, instead of
   * node-pty's write through libuv's thread pool: a typed command line is a few dozen bytes. Returns the
   * bytes left for node-pty's queue (all of them while that queue holds earlier bytes, to keep the
   * order), or undefined when everything was written.
   */
  private writeNow(bytes: Buffer): Buffer | undefined {
    const internals = this.pty as unknown as PtyInternals;
    const fd = internals._fd;
    const queue = internals._writeStream?._writeQueue;
    if (typeof fd !== 'number' || !Array.isArray(queue) || queue.length > 0) return bytes;
    try {
      const written = writeSync(fd, bytes);
      return written >= bytes.length ? undefined : bytes.subarray(written);
    } catch {
      // EAGAIN (the terminal's input queue is full) or anything else: node-pty's queue retries and reports.
      return bytes;
    }
  }

  override resize(cols: number, rows: number): void {
    if (this.hasExited || this.disposed) return;
    try {
      this.pty.resize(cols, rows);
    } catch {
      // exited between the check and the call
    }
  }

  override async signal(signal: string): Promise<void> {
    const target = (await this.foregroundGroup().catch(() => undefined)) ?? this.pid;
    if (target === undefined) return;
    try {
      process.kill(-target, signal as NodeJS.Signals);
    } catch {
      // gone
    }
  }

  override kill(options: TreeKillOptions): Promise<KillReport> {
    const pid = this.pid;
    if (pid === undefined) return Promise.resolve({ result: 'already_exited', survivors: [] });
    return killTree(
      this.facts,
      {
        roots: [pid],
        groups: [pid],
        owner: this.owner,
        ...(options.commandId ? { commandId: options.commandId } : {}),
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      },
      options.signal,
      options.graceMs,
    );
  }

  killEscaped(options: CommandKillOptions): Promise<KillReport> {
    const shell = this.pid;
    return killTree(
      this.facts,
      {
        roots: [],
        groups: [],
        commandId: options.commandId,
        owner: this.owner,
        ...(shell === undefined ? {} : { spare: [shell] }),
      },
      options.signal,
      options.graceMs,
    );
  }

  async escapedProcesses(commandIds: readonly string[]): Promise<EscapedScan> {
    return findEscaped(this.facts, commandIds, this.owner, this.pid);
  }

  async killJob(options: CommandKillOptions): Promise<KillReport> {
    const shell = this.pid;
    const fg = await this.foregroundGroup();
    const groups = fg !== undefined && fg !== shell ? [fg] : [];
    const report = await killTree(
      this.facts,
      {
        roots: [],
        groups,
        commandId: options.commandId,
        owner: this.owner,
        ...(shell === undefined ? {} : { spare: [shell] }),
      },
      options.signal,
      options.graceMs,
    );
    return this.interruptBuiltinJob(report);
  }

  async inputWaitEvidence(): Promise<InputWaitEvidence> {
    if (this.hasExited || this.pid === undefined) return 'no';
    const facts = await this.facts.inputWait(this.pid, this.ptsName);
    if (facts.members && this.supervisors.length > 0) {
      // In a sandbox: bubblewrap polls the terminal's fds while it waits for the program, but it is no
      // reader of the terminal; and the terminal is bound at /dev/console there (so /dev/tty opens as that).
      const terminal = this.ptsName;
      facts.members = facts.members
        .filter((m) => !this.supervisors.includes(m.pid))
        .map((m) => ({
          ...m,
          terminalFds: new Map(
            [...m.terminalFds].map(([fd, path]) => [
              fd,
              path === '/dev/console' && terminal ? terminal : path,
            ]),
          ),
        }));
    }
    const evidence = decideInputWait(facts);
    // What the terminal printed before its reader went to sleep may still be unread (a busy server): let
    // the event loop poll the terminal once after the facts, so that output reaches the listeners first.
    await afterNextPoll();
    return evidence;
  }

  async foregroundPrograms(): Promise<string[] | undefined> {
    if (this.hasExited || this.pid === undefined) return undefined;
    const foreground = foregroundGroupOf(this.pid, await this.facts.processes());
    return foreground && this.facts.programNames(foreground.members.map((p) => p.pid));
  }

  async foregroundIsOwn(): Promise<boolean | undefined> {
    if (this.hasExited || this.pid === undefined) return undefined;
    const group = await this.foregroundGroup();
    // node-pty makes its child a session leader: its process group is its pid.
    return group === undefined ? undefined : group === this.pid;
  }

  async foregroundProgram(): Promise<string | undefined> {
    const group = await this.foregroundGroup();
    if (group === undefined || group === this.pid || group === this.terminalPid) return undefined;
    return (await this.facts.process(group))?.comm;
  }

  /** The terminal's foreground process group, from the kernel. */
  private async foregroundGroup(): Promise<number | undefined> {
    if (this.pid === undefined) return undefined;
    return (await this.facts.process(this.pid))?.tpgid;
  }

  protected override disposeResources(): void {
    if (!this.hasExited) {
      // The program's group, and the terminal's (in a sandbox, bubblewrap's: its PID namespace dies with it).
      for (const pid of new Set([this.programPid, this.terminalPid])) {
        if (pid === undefined) continue;
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    this.drain.finish();
    try {
      (this.pty as unknown as { destroy?: () => void }).destroy?.();
    } catch {
      // already closed
    }
    this.onDisposed();
  }
}
