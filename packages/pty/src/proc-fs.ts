/**
 * Small, synchronous readers of Linux's /proc used for process trees, kernel evidence of terminal reads
 * and orphan reaping. Every reader tolerates processes vanishing mid-read (returns undefined).
 */

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { InputWaitFacts, ProcSample } from '@conch/core';
import { listPids, type ProcStat, readProcStat } from '@conch/node';

/** The value of one variable in a process's initial environment, or undefined. */
export function readEnvVar(pid: number, name: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
  const prefix = `${name}=`;
  for (const entry of text.split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return undefined;
}

/** A snapshot of all processes: stat by pid. */
export function snapshotProcesses(): Map<number, ProcStat> {
  const all = new Map<number, ProcStat>();
  for (const pid of listPids()) {
    const stat = readProcStat(pid);
    if (stat) all.set(pid, stat);
  }
  return all;
}

/** All descendants of `root` in a snapshot (not including root). */
export function descendantsOf(root: number, all: Map<number, ProcStat>): number[] {
  const children = new Map<number, number[]>();
  for (const stat of all.values()) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat.pid);
    else children.set(stat.ppid, [stat.pid]);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The link targets of `pid`'s open fds that are terminals, by fd number. */
export function terminalFds(pid: number): Map<number, string> {
  const out = new Map<number, string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      // /dev/console: a sandbox's view of its terminal (bubblewrap binds the terminal there).
      if (target.startsWith('/dev/pts/') || target.startsWith('/dev/tty') || target === '/dev/console') {
        out.set(Number(fd), target);
      }
    } catch {
      // fd closed meanwhile
    }
  }
  return out;
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The /proc facts about the foreground group of terminal `terminal`, whose session leader is `leader`,
 * that the core's `decideInputWait` judges (the SSH driver's probe script fetches the same ones remotely).
 */
export function localInputWaitFacts(
  leader: number | undefined,
  terminal: string | undefined,
): InputWaitFacts {
  const root = leader === undefined ? undefined : readProcStat(leader);
  const terminalDevice = root && root.ttyNr > 0 ? root.ttyNr : undefined;
  const group = root && root.tpgid > 0 ? root.tpgid : undefined;
  if (group === undefined) return { arch: process.arch, terminal, terminalDevice, members: undefined };
  const members: ProcSample[] = [];
  for (const stat of snapshotProcesses().values()) {
    if (stat.pgrp !== group) continue;
    members.push({
      pid: stat.pid,
      state: stat.state,
      ttyNr: stat.ttyNr,
      wchan: readOptional(`/proc/${stat.pid}/wchan`),
      syscall: readOptional(`/proc/${stat.pid}/syscall`),
      terminalFds: terminalFds(stat.pid),
    });
  }
  return { arch: process.arch, terminal, terminalDevice, members };
}
