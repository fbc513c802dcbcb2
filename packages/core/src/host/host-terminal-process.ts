/**
 * A terminal on a host that a driver reaches through a channel (an SSH exec channel, a container exec), as
 * the core's `TerminalProcess`: what every such driver shares, defined once. The channel runs the
 * {@link startupScript}, whose start marker carries the host's PID of the program; process facts, kills and
 * signals go through the host scripts ({@link HostScripts}) on that PID. A driver supplies the channel's
 * plumbing: it feeds output to {@link HostTerminalProcess.receive}, reports the end with
 * {@link HostTerminalProcess.endOfOutput} and `deliverExit`, writes, resizes, and says how to kill and
 * signal when no host script can run.
 */

import type { Clock } from '../clock.js';
import type {
  CommandKillOptions,
  EscapedScan,
  InputWaitEvidence,
  KillReport,
  TreeKillOptions,
} from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { decideInputWait } from '../input/input-wait.js';
import { TerminalProcessBase } from '../terminal-process-base.js';
import type { HostScripts } from './host-scripts.js';
import { COMMAND_MARKER, markerEntry, SESSION_MARKER } from './markers.js';
import type { ProbeReport } from './reports.js';
import { START_MARKER_OSC } from './scripts.js';
import { normalizeSignal } from './signals.js';

/** What a host terminal needs from its driver: the host scripts, and whether the host is still reachable. */
export interface TerminalHost {
  /** The host scripts, run on the driver's helper channels. */
  readonly scripts: HostScripts;
  /** True once the host (the connection, the container) is gone for this terminal. */
  readonly lost: boolean;
}

/** How the start of a terminal went: its start marker arrived, an error marker came, or it closed first. */
export type StartOutcome = { ok: true } | { ok: false; reason: 'cwd' | 'program' | 'closed' };

/** How a driver words where its terminals start, for the errors of {@link startFailure}. */
export interface StartPlace {
  /** Where, after a verb: `on box.example`, `in container web`. */
  where: string;
  /** The host as a noun: `the remote host`, `the container`. */
  host: string;
  /** What a start that ended before the marker means, and what to do about it. */
  closed: { message: string; hint: string };
}

/**
 * The error of a terminal that did not start: `cwd` and `program` (the start-up script's error markers) are
 * INVALID_ARGUMENT naming the value; `closed` (the channel ended first) is INTERNAL.
 */
export function startFailure(
  reason: 'cwd' | 'program' | 'closed',
  start: { file: string; cwd: string | undefined },
  place: StartPlace,
): ConchError {
  if (reason === 'cwd') {
    return new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Invalid cwd: ${JSON.stringify(start.cwd)} does not exist ${place.where} (or is not accessible).`,
      { hint: `Give an existing directory on ${place.host}.` },
    );
  }
  if (reason === 'program') {
    return new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Could not start ${JSON.stringify(start.file)} ${place.where}: not found or not executable.`,
      { hint: `Give the path or name of a program installed on ${place.host}, e.g. /bin/bash, zsh, sh.` },
    );
  }
  return new ConchError(ErrorCode.INTERNAL, place.closed.message, { hint: place.closed.hint });
}

/** Longest stretch of output searched for the start marker before giving up on it. */
const MAX_PRESTART_BYTES = 64 * 1024;

/** Key presses that make the terminal send a signal to its foreground group. */
const SIGNAL_KEYS: Readonly<Record<string, string>> = {
  SIGINT: '\x03',
  SIGQUIT: '\x1c',
  SIGTSTP: '\x1a',
};

/** How long a probe's report is reused for `foregroundProgram()` after an input-wait probe. */
const PROBE_REUSE_MS = 1000;

const encoder = new TextEncoder();
const latin1 = new TextDecoder('latin1');

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** A terminal on a host reached through a channel (see the module doc). */
export abstract class HostTerminalProcess extends TerminalProcessBase {
  /** The driver's side of the host. */
  protected readonly host: TerminalHost;
  private hostPid: number | undefined;
  private readonly startPrefix: Uint8Array;
  private prestart: Uint8Array | undefined = new Uint8Array(0);
  private startResolve: ((outcome: StartOutcome) => void) | undefined;
  /** Resolves when the start marker arrived (or the channel closed before it). */
  readonly started: Promise<StartOutcome>;
  private lastProbe: { at: number; report: ProbeReport } | undefined;

  /** `nonce`: the driver's, as given to {@link startupScript}. */
  constructor(clock: Clock, host: TerminalHost, nonce: string) {
    super(clock);
    this.host = host;
    this.startPrefix = encoder.encode(`\x1b]${START_MARKER_OSC};${nonce};`);
    this.started = new Promise((resolve) => {
      this.startResolve = resolve;
    });
  }

  /**
   * The start as it went, waiting at most `timeoutMs` for the marker (then going on as started, without a
   * PID: a host whose start-up prints too much or too slowly still gets its terminal).
   */
  waitForStart(timeoutMs: number): Promise<StartOutcome> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => resolve({ ok: true }), timeoutMs);
      void this.started.then((outcome) => {
        this.clock.clearTimeout(timer);
        resolve(outcome);
      });
    });
  }

  /** The program's process id on its host, once the start marker arrived. */
  get pid(): number | undefined {
    return this.hostPid;
  }

  private resolveStart(outcome: StartOutcome): void {
    const resolve = this.startResolve;
    this.startResolve = undefined;
    resolve?.(outcome);
  }

  /**
   * Output of the channel. Until the start marker arrives it is searched for it: what comes before the
   * marker is the host's own start-up noise (a login shell's files), not the program's, and is dropped.
   */
  protected receive(chunk: Uint8Array): void {
    if (this.prestart === undefined) {
      this.deliver(chunk);
      return;
    }
    const buffer = concat(this.prestart, chunk);
    const at = indexOf(buffer, this.startPrefix);
    const end = at < 0 ? -1 : buffer.indexOf(0x07, at + this.startPrefix.length);
    if (end < 0) {
      if (buffer.length > MAX_PRESTART_BYTES) {
        // No marker in sight: deliver everything as output and go on without a PID.
        this.prestart = undefined;
        this.resolveStart({ ok: true });
        this.deliver(buffer);
      } else {
        this.prestart = buffer;
      }
      return;
    }
    const body = latin1.decode(buffer.subarray(at + this.startPrefix.length, end));
    const rest = buffer.subarray(end + 1);
    this.prestart = undefined;
    const [kind, value] = body.split(';');
    if (kind === 'pid' && value !== undefined && /^\d+$/.test(value)) {
      this.hostPid = Number(value);
      this.resolveStart({ ok: true });
    } else if (kind === 'err') {
      this.resolveStart({ ok: false, reason: value === 'cwd' ? 'cwd' : 'program' });
    } else {
      this.resolveStart({ ok: true });
    }
    if (rest.length > 0) this.deliver(rest);
  }

  /** The channel's output ended: output held back before a start marker is delivered; the start settles. */
  protected endOfOutput(): void {
    const held = this.prestart;
    this.prestart = undefined;
    if (held !== undefined && held.length > 0) this.deliver(held);
    this.resolveStart({ ok: false, reason: 'closed' });
  }

  /** The host went away: output held back is dropped and the start settles as closed. */
  protected abandonStart(): void {
    this.prestart = undefined;
    this.resolveStart({ ok: false, reason: 'closed' });
  }

  override async signal(signal: string): Promise<void> {
    if (this.hasExited || this.disposed) return;
    const name = normalizeSignal(signal);
    if (!name) return;
    const pid = this.hostPid;
    if (pid === undefined || this.host.lost) {
      await this.signalDirectly(name);
      return;
    }
    await this.host.scripts.signalForeground(pid, name).catch(() => this.pressSignalKey(name));
  }

  /**
   * Signals without a host script (no PID known, or the host is gone): the key press for INT, QUIT and
   * TSTP. A driver with a way of its own (SSH's signal request) adds it.
   */
  protected signalDirectly(name: string): Promise<void> {
    return this.pressSignalKey(name);
  }

  /** Types the key that makes the terminal send `name` (INT, QUIT, TSTP); nothing for other signals. */
  protected async pressSignalKey(name: string): Promise<void> {
    const key = SIGNAL_KEYS[name];
    if (key) await this.write(key, 1000).catch(() => {});
  }

  override kill(options: TreeKillOptions): Promise<KillReport> {
    const markers: string[] = [];
    if (options.commandId) markers.push(markerEntry(COMMAND_MARKER, options.commandId));
    if (options.sessionId) markers.push(markerEntry(SESSION_MARKER, options.sessionId));
    return this.hostKill('tree', options.signal, options.graceMs, markers);
  }

  killEscaped(options: CommandKillOptions): Promise<KillReport> {
    // Tree mode with no root: only the escaped processes and their descendants.
    return this.hostKill(
      'tree',
      options.signal,
      options.graceMs,
      [markerEntry(COMMAND_MARKER, options.commandId)],
      true,
    );
  }

  async escapedProcesses(commandIds: readonly string[]): Promise<EscapedScan> {
    if (commandIds.length === 0 || this.host.lost) return { escaped: new Map(), forks: [] };
    return this.host.scripts.escapedProcesses(this.hostPid, commandIds);
  }

  async killJob(options: CommandKillOptions): Promise<KillReport> {
    return this.interruptBuiltinJob(
      await this.hostKill('job', options.signal, options.graceMs, [
        markerEntry(COMMAND_MARKER, options.commandId),
      ]),
    );
  }

  private async hostKill(
    mode: 'tree' | 'job',
    signal: string,
    graceMs: number,
    markers: string[],
    escapedOnly = false,
  ): Promise<KillReport> {
    const name = normalizeSignal(signal);
    if (!name) throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid signal: ${JSON.stringify(signal)}.`);
    if (this.host.lost) return { result: 'stop_unconfirmed', survivors: [] };
    const root = escapedOnly ? undefined : this.hostPid;
    if (mode === 'tree' && root === undefined && markers.length === 0) {
      if (this.hasExited) return { result: 'already_exited', survivors: [] };
      this.dispose();
      return { result: 'stop_unconfirmed', survivors: [] };
    }
    let report: KillReport | 'unsupported';
    try {
      report = await this.host.scripts.kill({ mode, signal: name, graceMs, root, markers });
    } catch {
      // No helper could run the script. Escaped processes alone (no root) cannot be reached without one;
      // never fall back to hanging up this terminal for them.
      if (escapedOnly) return { result: 'stop_unconfirmed', survivors: [] };
      return this.fallbackKill(mode, name, graceMs);
    }
    if (report !== 'unsupported') return report;
    return escapedOnly
      ? { result: 'stop_unconfirmed', survivors: [] }
      : this.fallbackKill(mode, name, graceMs);
  }

  /**
   * Kills without a host script (none could run, or the host cannot do what was asked): whatever the
   * channel itself offers. Escaped processes cannot be reached this way.
   */
  protected abstract fallbackKill(mode: 'tree' | 'job', name: string, graceMs: number): Promise<KillReport>;

  /** A fresh report of the probe script about the terminal's foreground group, or undefined. */
  private async probe(): Promise<ProbeReport | undefined> {
    const pid = this.hostPid;
    if (pid === undefined || this.host.lost) return undefined;
    try {
      const report = await this.host.scripts.probe(pid);
      this.lastProbe = { at: this.clock.now(), report };
      return report;
    } catch {
      return undefined;
    }
  }

  /** The last probe's report when it is at most {@link PROBE_REUSE_MS} old, else a fresh one. */
  private async recentProbe(): Promise<ProbeReport | undefined> {
    const last = this.lastProbe;
    if (last && this.clock.now() - last.at <= PROBE_REUSE_MS) return last.report;
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
}
