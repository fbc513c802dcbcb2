/**
 * Test helpers that read the local `/proc` (Linux): the process table, a process's descendants and the
 * processes whose environment carries a tag (conch marks its shells and commands with `CONCH_SESSION_ID`,
 * `CONCH_COMMAND_ID` and `CONCH_OWNER`). Zombies count as gone.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Every live (non-zombie) process as pid → parent pid. */
export function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      table.set(pid, Number(fields[1]));
    } catch {
      // gone
    }
  }
  return table;
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
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

/**
 * Live processes (other than this one) whose environment has `NAME=value`, or any `NAME=…` when `value`
 * is omitted. Run as root, a test sees every user's processes.
 */
export function pidsWithEnv(name: string, value?: string): number[] {
  const out: number[] = [];
  for (const pid of processTable().keys()) {
    if (pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const hit =
        value === undefined ? env.some((kv) => kv.startsWith(`${name}=`)) : env.includes(`${name}=${value}`);
      if (hit) out.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Number of live processes marked with `CONCH_COMMAND_ID=id` (a command and what it started). */
export function countMarked(id: string): number {
  return pidsWithEnv('CONCH_COMMAND_ID', id).length;
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
