/**
 * Which server instance owns what: a process is identified by its pid AND its start time (seconds since
 * the epoch, from the host's process facts), so a reused pid, or a server started inside another server's
 * session (which inherits that server's environment), is never taken for another instance. Private
 * directories carry a marker file naming their instance, so that a later start removes those whose
 * instance is gone. An instance named without a start time in seconds (the format of older servers, or a
 * host whose start times could not be read) counts as alive while a node or conch process has its pid: a
 * cheap, conservative check that never takes a live server's processes.
 */

import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEndedState } from '@conch/core/host';
import { ownStartTime, processFacts } from './process-facts/select-facts.js';

/** One server instance: its pid and its start time in seconds since the epoch (undefined: not known). */
export interface ServerInstance {
  pid: number;
  startTime: number | undefined;
}

/** Name of the marker file in a private directory: `<pid> s<startTime>` of the owning instance. */
export const INSTANCE_MARKER = '.conch-instance';

/** Start times read by two implementations (`/proc` ticks, `ps` dates) may differ by this many seconds. */
const START_TIME_SLACK_S = 1;

/** The start time of `pid` (seconds since the epoch), or undefined when it is gone or a zombie. */
export async function processStartTime(pid: number): Promise<number | undefined> {
  const found = await processFacts().process(pid);
  return found === undefined || isEndedState(found.state) ? undefined : found.startTime;
}

/** This process as a server instance. */
export function currentInstance(): ServerInstance {
  return { pid: process.pid, startTime: ownStartTime() };
}

/** Whether `instance` still runs (same pid, same start time; see the module doc for one without). */
export async function isInstanceAlive(instance: ServerInstance): Promise<boolean> {
  if (instance.pid === process.pid) return true;
  const found = await processFacts().process(instance.pid);
  if (found === undefined || isEndedState(found.state)) return false;
  if (instance.startTime === undefined || found.startTime === undefined) return /node|conch/.test(found.comm);
  return Math.abs(found.startTime - instance.startTime) <= START_TIME_SLACK_S;
}

/** The start time as instance names write it: `s<seconds>`, or `u` when unknown. */
export function formatStartTime(startTime: number | undefined): string {
  return startTime === undefined ? 'u' : `s${startTime}`;
}

/** The start time of an instance name's `s<seconds>` part; undefined for anything else (older formats). */
export function parseStartTimeField(field: string): number | undefined {
  const match = /^s(\d+)$/.exec(field);
  return match ? Number(match[1]) : undefined;
}

/** Writes the marker of this instance into `dir` (a private directory it created). */
export function markInstanceDir(dir: string): void {
  const me = currentInstance();
  writeFileSync(join(dir, INSTANCE_MARKER), `${me.pid} ${formatStartTime(me.startTime)}\n`, { mode: 0o600 });
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
  const match = /^(\d+) (\S+)\s*$/.exec(text);
  return match ? { pid: Number(match[1]), startTime: parseStartTimeField(match[2]!) } : undefined;
}

/**
 * Removes the `conch-*` directories under `parent` (default: the OS temp dir) that this user owns and whose
 * marker names an instance that no longer runs; returns the removed paths. Unmarked directories stay.
 */
export async function removeDeadInstanceDirs(parent: string = tmpdir()): Promise<string[]> {
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
      if (!owner || (await isInstanceAlive(owner))) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // vanished or not ours to remove
    }
  }
  return removed;
}
