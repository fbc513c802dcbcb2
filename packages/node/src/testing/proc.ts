/**
 * Test helpers that read the local `/proc` (Linux): the process table, a process's descendants and the
 * processes whose environment carries a tag (conch marks its shells and commands with `CONCH_SESSION_ID`,
 * `CONCH_COMMAND_ID` and `CONCH_OWNER`). Zombies count as gone.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { COMMAND_MARKER, isEndedState } from '@conch/core/host';
import { type ProcStat, readProcStat } from '../process-facts/proc-facts.js';

/** Every live (non-zombie) process as pid → parent pid. */
export function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const stat = processStat(pid);
    if (stat && stat.state !== 'Z' && stat.state !== 'X') table.set(pid, stat.ppid);
  }
  return table;
}

/** Fields of `/proc/PID/stat`, as the one reader gives them. */
export type ProcessStat = ProcStat;

/** The state, parent, group and session of `pid`, or undefined when it is gone. */
export function processStat(pid: number): ProcessStat | undefined {
  return readProcStat(pid);
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && !isEndedState(stat.state);
}

/** The live descendants of `root` (without it). */
export function descendants(root: number): number[] {
  return processTree(root).slice(1);
}

/** `root` and all its live descendants (empty when `root` is gone). */
export function processTree(root: number): number[] {
  const table = processTable();
  if (!table.has(root)) return [];
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    for (const [pid, ppid] of table) if (ppid === out[i]) out.push(pid);
  }
  return out;
}

/** The `NAME=value` entries of a process's environment, or undefined when it is gone (or not ours to read). */
export function processEnv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

/** The value of `name` in a process's environment, or undefined. */
export function processEnvValue(pid: number, name: string): string | undefined {
  const entry = processEnv(pid)?.find((kv) => kv.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/**
 * Live processes (other than this one) whose environment has `NAME=value`, `NAME=…` with a value the
 * predicate accepts, or any `NAME=…` when `value` is omitted. Run as root, a test sees every user's
 * processes.
 */
export function pidsWithEnv(name: string, value?: string | ((value: string) => boolean)): number[] {
  const accepts =
    value === undefined ? () => true : typeof value === 'string' ? (v: string) => v === value : value;
  const out: number[] = [];
  for (const pid of processTable().keys()) {
    if (pid === process.pid) continue;
    const found = processEnvValue(pid, name);
    if (found !== undefined && accepts(found)) out.push(pid);
  }
  return out;
}

/** The argument vector of a process, or undefined when it is gone. */
export function processCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

/** A field of `/proc/PID/status` in kB (e.g. `VmRSS`, `VmHWM`), or undefined. */
export function procStatusKb(pid: number | 'self', field: string): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Number of live processes carrying `CONCH_COMMAND_ID=id` (a command and what it started). */
export function countWithCommandId(id: string): number {
  return pidsWithEnv(COMMAND_MARKER, id).length;
}

/** Open file descriptors of process `pid` (this one by default), as their link targets. */
export function openFds(pid: number | 'self' = 'self'): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed meanwhile (the directory listing's own fd)
    }
  }
  return out;
}
