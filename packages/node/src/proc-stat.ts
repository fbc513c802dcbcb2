/**
 * The one reader of Linux's `/proc/PID/stat` (and of the pid list in `/proc`): the process tree, terminal
 * evidence, orphan reaping and instance liveness all read the same fields the same way. Every reader
 * tolerates a process vanishing mid-read (returns undefined).
 */

import { readdirSync, readFileSync } from 'node:fs';

/** The fields of `/proc/PID/stat` conch uses. */
export interface ProcStat {
  pid: number;
  /** The executable's name (at most 15 characters, as the kernel keeps it). */
  comm: string;
  /** One-letter state (`R`, `S`, `Z`, …). */
  state: string;
  ppid: number;
  /** Process group. */
  pgrp: number;
  /** Session. */
  session: number;
  /** Device number of the controlling terminal (`tty_nr`, field 7; 0 when it has none). */
  ttyNr: number;
  /** Foreground process group of the process's controlling terminal (-1 if none). */
  tpgid: number;
  /** Start time in clock ticks since boot: with the pid, names one process across pid reuse. */
  startTime: number;
}

/** Reads `/proc/PID/stat`, or undefined when the process is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may itself hold spaces and parentheses: the fields start after the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    comm: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    ttyNr: Number(fields[4]),
    tpgid: Number(fields[5]),
    startTime: Number(fields[19]),
  };
}

/** Every pid currently in `/proc`. */
export function listPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** Whether a process state letter means the process has ended (zombie or dead). */
export function isEndedState(state: string): boolean {
  return state === 'Z' || state === 'X';
}

/** True while the process exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== undefined && !isEndedState(stat.state);
}
