/**
 * The host scripts as operations: what a driver that reaches its host through a channel (SSH, a container
 * exec) calls to kill a tree, find what ended commands left running, probe the terminal's foreground group
 * and signal it. The driver supplies only the way to run a script ({@link RunHostScript}); the scripts, their
 * arguments and the reading of their reports are defined here once.
 */

import type { EscapedScan, KillReport } from '../driver.js';
import { COMMAND_MARKER, markerEntry } from './markers.js';
import { LSOF_SOCKET_TYPES, type ProcessFactsKind } from './process-facts.js';
import { type ProbeReport, parseEscapedReport, parseKillReport, parseProbeReport } from './reports.js';
import { ESCAPED_SCRIPT, KILL_SCRIPT, PROBE_SCRIPT, SIGNAL_SCRIPT } from './scripts.js';
import { normalizeSignal } from './signals.js';

/** What a script run is for (a driver may, e.g., let a probe skip the queue for a free channel). */
export type HostScriptPurpose = 'kill' | 'escaped' | 'probe' | 'signal';

/**
 * Runs a POSIX-sh `script` with positional `args` on the host (as `sh -c SCRIPT conch ARGS…`) and
 * resolves with its stdout once it exits 0; rejects when it cannot run, fails, or outlives `timeoutMs`.
 */
export type RunHostScript = (
  script: string,
  args: readonly string[],
  call: { purpose: HostScriptPurpose; timeoutMs: number },
) => Promise<string>;

/** What to kill with {@link HostScripts.kill}. */
export interface HostKillOptions {
  /** `tree`: the root's session, group and descendants; `job`: the root's terminal foreground job. */
  mode: 'tree' | 'job';
  /** Any spelling {@link normalizeSignal} accepts. */
  signal: string;
  graceMs: number;
  /** The terminal's own process (session leader); undefined to kill only the processes carrying the given ids. */
  root: number | undefined;
  /** `NAME=value` environment entries whose carriers (and their descendants) die too. */
  markers: readonly string[];
}

/** The host scripts bound to one host (see the module doc). */
export class HostScripts {
  /** How the host's process facts are read (from the connect probe). */
  readonly facts: ProcessFactsKind;
  private readonly run: RunHostScript;

  constructor(run: RunHostScript, facts: ProcessFactsKind) {
    this.run = run;
    this.facts = facts;
  }

  /**
   * Kills with {@link KILL_SCRIPT}; `unsupported` when the host cannot do what was asked. Rejects when the
   * script could not run (no channel), and for a signal that is no signal name.
   */
  async kill(options: HostKillOptions): Promise<KillReport | 'unsupported'> {
    const name = normalizeSignal(options.signal);
    if (!name) throw new Error(`invalid signal ${JSON.stringify(options.signal)}`);
    const ticks = Math.max(0, Math.round(options.graceMs / 100));
    const root = options.root === undefined ? '' : String(options.root);
    const out = await this.run(
      KILL_SCRIPT,
      [this.facts, options.mode, name.slice(3), String(ticks), root, ...options.markers],
      { purpose: 'kill', timeoutMs: options.graceMs + 15_000 },
    );
    return parseKillReport(out);
  }

  /** One scan with {@link ESCAPED_SCRIPT}: the processes of each command id, and `terminal`'s forks. */
  async escapedProcesses(terminal: number | undefined, commandIds: readonly string[]): Promise<EscapedScan> {
    const entries = commandIds.map((id) => markerEntry(COMMAND_MARKER, id));
    const root = terminal === undefined ? '' : String(terminal);
    const out = await this.run(ESCAPED_SCRIPT, [this.facts, root, ...entries], {
      purpose: 'escaped',
      timeoutMs: 10_000,
    });
    return parseEscapedReport(out, entries, commandIds, terminal);
  }

  /** The facts about the foreground group of `terminal`'s terminal, with {@link PROBE_SCRIPT}. */
  async probe(terminal: number): Promise<ProbeReport> {
    const out = await this.run(PROBE_SCRIPT, [this.facts, String(terminal), LSOF_SOCKET_TYPES], {
      purpose: 'probe',
      timeoutMs: 5000,
    });
    return parseProbeReport(out);
  }

  /** Signals the foreground process group of `terminal`'s terminal; rejects when it cannot be found. */
  async signalForeground(terminal: number, signal: string): Promise<void> {
    const name = normalizeSignal(signal);
    if (!name) throw new Error(`invalid signal ${JSON.stringify(signal)}`);
    await this.run(SIGNAL_SCRIPT, [this.facts, name.slice(3), String(terminal)], {
      purpose: 'signal',
      timeoutMs: 10_000,
    });
  }
}
