/**
 * Kills process trees the way docs/sessions.md asks: the process group, every descendant, and escaped
 * descendants (double forks, setsid) found by the `CONCH_COMMAND_ID` marker in their environment;
 * SIGKILL after a grace period; survivors reported. Every fact comes from the host's process facts
 * (`/proc` or `ps`).
 */

import type { EscapedProcess, EscapedScan, KillReport } from '@conch/core';
import {
  COMMAND_MARKER,
  descendantsOf,
  isEndedState,
  OWNER_MARKER,
  type ProcessFacts,
  SESSION_MARKER,
} from '@conch/core/host';

/** What to kill. */
export interface KillTargets {
  /** Root processes whose descendants die too. */
  roots: number[];
  /** Process groups to signal as a whole. */
  groups: number[];
  /** Also every process whose environment has `CONCH_COMMAND_ID=commandId`. */
  commandId?: string;
  /** Also every process whose environment has `CONCH_SESSION_ID=sessionId` (escaped double forks). */
  sessionId?: string;
  /**
   * Id matches count only for processes of this server instance (`CONCH_OWNER=owner`): session ids
   * such as `default` repeat across servers on one machine.
   */
  owner?: string;
  /** PIDs never to touch (e.g. the session shell when killing one job). */
  spare?: number[];
}

/** Finds every live PID the targets cover. */
export async function collectTargets(facts: ProcessFacts, targets: KillTargets): Promise<number[]> {
  const table = await facts.processes();
  const found = new Set<number>();
  const present = new Set(table.map((p) => p.pid));
  for (const root of targets.roots) {
    if (present.has(root)) found.add(root);
    for (const pid of descendantsOf(root, table)) found.add(pid);
  }
  for (const p of table) if (targets.groups.includes(p.pgid)) found.add(p.pid);
  if (targets.commandId !== undefined || targets.sessionId !== undefined) {
    const markers = await facts.markers([OWNER_MARKER, COMMAND_MARKER, SESSION_MARKER]);
    for (const [pid, values] of markers) {
      if (pid === process.pid) continue;
      const carriesId =
        (targets.owner === undefined || values.get(OWNER_MARKER) === targets.owner) &&
        ((targets.commandId !== undefined && values.get(COMMAND_MARKER) === targets.commandId) ||
          (targets.sessionId !== undefined && values.get(SESSION_MARKER) === targets.sessionId));
      if (carriesId) {
        found.add(pid);
        for (const d of descendantsOf(pid, table)) found.add(d);
      }
    }
  }
  for (const pid of targets.spare ?? []) found.delete(pid);
  found.delete(process.pid);
  const live = new Set(table.filter((p) => !isEndedState(p.state)).map((p) => p.pid));
  return [...found].filter((pid) => live.has(pid));
}

/**
 * The live processes of server instance `owner` carrying `CONCH_COMMAND_ID=<id>`, with their states, for
 * each of `commandIds` that has any, and the forks of `terminal` (the terminal's own process, which never
 * counts as escaped): its live children with its command name.
 */
export async function findEscaped(
  facts: ProcessFacts,
  commandIds: readonly string[],
  owner: string,
  terminal?: number,
): Promise<EscapedScan> {
  const wanted = new Set(commandIds);
  const found = new Map<string, EscapedProcess[]>();
  const forks: EscapedProcess[] = [];
  if (wanted.size === 0) return { escaped: found, forks };
  const [table, markers] = await Promise.all([
    facts.processes(),
    facts.markers([COMMAND_MARKER, OWNER_MARKER]),
  ]);
  const shell = terminal === undefined ? undefined : table.find((p) => p.pid === terminal);
  for (const p of table) {
    if (p.pid === process.pid || p.pid === terminal || isEndedState(p.state)) continue;
    if (shell && p.ppid === shell.pid && p.comm === shell.comm) forks.push({ pid: p.pid, state: p.state });
    const values = markers.get(p.pid);
    const id = values?.get(COMMAND_MARKER);
    if (id === undefined || !wanted.has(id) || values?.get(OWNER_MARKER) !== owner) continue;
    const escaped = { pid: p.pid, state: p.state };
    const list = found.get(id);
    if (list) list.push(escaped);
    else found.set(id, [escaped]);
  }
  return { escaped: found, forks };
}

function send(pid: number, signal: NodeJS.Signals | number): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone, or not ours
  }
}

async function waitGone(facts: ProcessFacts, pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = await facts.alive(pids);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    alive = await facts.alive(alive);
  }
  return alive;
}

/**
 * Signals every target, waits `graceMs` for them to go, then SIGKILLs what is left (found afresh, so
 * children forked meanwhile die too) and reports survivors.
 */
export async function killTree(
  facts: ProcessFacts,
  targets: KillTargets,
  signal: string,
  graceMs: number,
): Promise<KillReport> {
  const first = await collectTargets(facts, targets);
  if (first.length === 0) return { result: 'already_exited', survivors: [] };
  const sig = signal as NodeJS.Signals;
  for (const group of targets.groups)
    if (group > 1 && !(targets.spare ?? []).includes(group)) send(-group, sig);
  for (const pid of first) send(pid, sig);
  // Stopped processes cannot act on a catchable signal until continued.
  if (signal !== 'SIGKILL') for (const pid of first) send(pid, 'SIGCONT');
  let alive = await waitGone(facts, first, graceMs);
  const again = await collectTargets(facts, targets);
  const rest = [...new Set([...alive, ...again])];
  if (rest.length > 0) {
    for (const group of targets.groups)
      if (group > 1 && !(targets.spare ?? []).includes(group)) send(-group, 'SIGKILL');
    for (const pid of rest) send(pid, 'SIGKILL');
    alive = await waitGone(facts, rest, 2000);
  }
  return alive.length === 0
    ? { result: 'killed', survivors: [] }
    : { result: 'stop_unconfirmed', survivors: alive };
}
