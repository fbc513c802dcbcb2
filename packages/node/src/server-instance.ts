/**
 * Which server instance owns what: a process is identified by its pid AND its start time (from
 * /proc/PID/stat), so a reused pid, or a server started inside another server's session (which inherits
 * that server's environment), is never taken for another instance. Private directories carry a marker
 * file naming their instance, so that a later start removes those whose instance is gone.
 */

import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEndedState, readProcStat } from './proc-stat.js';

/** One server instance: its pid and its start time in clock ticks since boot. */
export interface ServerInstance {
  pid: number;
  startTime: number;
}

/** Name of the marker file in a private directory: `<pid> <startTime>` of the owning instance. */
export const INSTANCE_MARKER = '.conch-instance';

/** The start time of `pid` (clock ticks since boot), or undefined when it is gone or a zombie. */
export function processStartTime(pid: number): number | undefined {
  const stat = readProcStat(pid);
  if (stat === undefined || isEndedState(stat.state)) return undefined;
  return Number.isFinite(stat.startTime) ? stat.startTime : undefined;
}

/** This process as a server instance. */
export function currentInstance(): ServerInstance {
  return { pid: process.pid, startTime: processStartTime(process.pid) ?? 0 };
}

/** Whether `instance` still runs (same pid, same start time). */
export function isInstanceAlive(instance: ServerInstance): boolean {
  if (instance.pid === process.pid) return true;
  return processStartTime(instance.pid) === instance.startTime;
}

/** Writes the marker of this instance into `dir` (a private directory it created). */
export function markInstanceDir(dir: string): void {
  const me = currentInstance();
  writeFileSync(join(dir, INSTANCE_MARKER), `${me.pid} ${me.startTime}\n`, { mode: 0o600 });
}

/** Removes the marker from `dir`, so that the directory outlives its instance (kept spill files). */
export function unmarkInstanceDir(dir: string): void {
  rmSync(join(dir, INSTANCE_MARKER), { force: true });
}

/** The instance named by the marker in `dir`, or undefined when it has none. */
export function readInstanceMarker(dir: string): ServerInstance | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, INSTANCE_MARKER), 'utf8');
  } catch {
    return undefined;
  }
  const match = /^(\d+) (\d+)\s*$/.exec(text);
  return match ? { pid: Number(match[1]), startTime: Number(match[2]) } : undefined;
}

/**
 * Removes the `conch-*` directories under `parent` (default: the OS temp dir) that this user owns and whose
 * marker names an instance that no longer runs; returns the removed paths. Unmarked directories stay.
 */
export function removeDeadInstanceDirs(parent: string = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    if (!name.startsWith('conch-')) continue;
    const dir = join(parent, name);
    try {
      const stat = lstatSync(dir);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      const owner = readInstanceMarker(dir);
      if (!owner || isInstanceAlive(owner)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // vanished or not ours to remove
    }
  }
  return removed;
}
