/**
 * Kills process trees the way docs/sessions.md asks: the process group, every descendant, and escaped
 * descendants (double forks, setsid) found by the `CONCH_COMMAND_ID` in their environment;
 * SIGKILL after a grace period; survivors reported.
 */

import type { EscapedProcess, EscapedScan, KillReport } from '@conch/core';
import { COMMAND_MARKER, OWNER_MARKER, SESSION_MARKER } from '@conch/core/host';
import { isProcessAlive } from '@conch/node';
import { descendantsOf, readEnvVar, snapshotProcesses } from './proc-fs.js';

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
export function collectTargets(targets: KillTargets): number[] {
  const all = snapshotProcesses();
  const found = new Set<number>();
  for (const root of targets.roots) {
    if (all.has(root)) found.add(root);
    for (const pid of descendantsOf(root, all)) found.add(pid);
  }
  for (const stat of all.values()) {
    if (targets.groups.includes(stat.pgrp)) found.add(stat.pid);
  }
  if (targets.commandId !== undefined || targets.sessionId !== undefined) {
    for (const pid of all.keys()) {
      if (pid === process.pid) continue;
      const carriesId =
        (targets.owner === undefined || readEnvVar(pid, OWNER_MARKER) === targets.owner) &&
        ((targets.commandId !== undefined && readEnvVar(pid, COMMAND_MARKER) === targets.commandId) ||
          (targets.sessionId !== undefined && readEnvVar(pid, SESSION_MARKER) === targets.sessionId));
      if (carriesId) {
        found.add(pid);
        for (const d of descendantsOf(pid, all)) found.add(d);
      }
    }
  }
  for (const pid of targets.spare ?? []) found.delete(pid);
  found.delete(process.pid);
  return [...found].filter((pid) => {
    const stat = all.get(pid);
    return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
  });
}

/**
 * The live processes of server instance `owner` carrying `CONCH_COMMAND_ID=<id>`, with their states, for
 * each of `commandIds` that has any, and the forks of `terminal` (the terminal's own process, which never
 * counts as escaped): its live children with its command name.
 */
export function findEscaped(commandIds: readonly string[], owner: string, terminal?: number): EscapedScan {
  const wanted = new Set(commandIds);
  const found = new Map<string, EscapedProcess[]>();
  const forks: EscapedProcess[] = [];
  if (wanted.size === 0) return { escaped: found, forks };
  const all = snapshotProcesses();
  const shell = terminal === undefined ? undefined : all.get(terminal);
  for (const stat of all.values()) {
    if (stat.pid === process.pid || stat.pid === terminal || stat.state === 'Z' || stat.state === 'X')
      continue;
    if (shell && stat.ppid === shell.pid && stat.comm === shell.comm)
      forks.push({ pid: stat.pid, state: stat.state });
    const id = readEnvVar(stat.pid, COMMAND_MARKER);
    if (id === undefined || !wanted.has(id) || readEnvVar(stat.pid, OWNER_MARKER) !== owner) continue;
    const escaped = { pid: stat.pid, state: stat.state };
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

async function waitGone(pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isProcessAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    alive = alive.filter(isProcessAlive);
  }
  return alive;
}

/**
 * Signals every target, waits `graceMs` for them to go, then SIGKILLs what is left (found afresh, so
 * children forked meanwhile die too) and reports survivors.
 */
export async function killTree(targets: KillTargets, signal: string, graceMs: number): Promise<KillReport> {
  const first = collectTargets(targets);
  if (first.length === 0) return { result: 'already_exited', survivors: [] };
  const sig = signal as NodeJS.Signals;
  for (const group of targets.groups)
    if (group > 1 && !(targets.spare ?? []).includes(group)) send(-group, sig);
  for (const pid of first) send(pid, sig);
  // Stopped processes cannot act on a catchable signal until continued.
  if (signal !== 'SIGKILL') for (const pid of first) send(pid, 'SIGCONT');
  let alive = await waitGone(first, graceMs);
  const again = collectTargets(targets);
  const rest = [...new Set([...alive, ...again])];
  if (rest.length > 0) {
    for (const group of targets.groups)
      if (group > 1 && !(targets.spare ?? []).includes(group)) send(-group, 'SIGKILL');
    for (const pid of rest) send(pid, 'SIGKILL');
    alive = await waitGone(rest, 2000);
  }
  return alive.length === 0
    ? { result: 'killed', survivors: [] }
    : { result: 'stop_unconfirmed', survivors: alive };
}
