/**
 * Which programs are in a terminal's foreground, from Linux's /proc: every process of the foreground process
 * group (the group the kernel delivers typed input to), whatever that group is — a job the shell started, or
 * the terminal's first process itself after `exec`. Each process is named by its command name, its argv[0]
 * and its executable's base name, so a renamed argv[0] (`exec -a`) does not hide a shell.
 */

import { readFileSync, readlinkSync } from 'node:fs';
import { readProcStat } from '@conch/node';
import { snapshotProcesses } from './proc-fs.js';

/** The names of every live process in the foreground process group of `ttyOwner`'s terminal, leader first. */
export function foregroundGroupNames(ttyOwner: number): string[] | undefined {
  const owner = readProcStat(ttyOwner);
  if (!owner || owner.tpgid <= 0) return undefined;
  const group = owner.tpgid;
  const members = [...snapshotProcesses().values()]
    .filter((s) => s.pgrp === group && s.state !== 'Z' && s.state !== 'X')
    .sort((a, b) => (a.pid === group ? -1 : b.pid === group ? 1 : a.pid - b.pid));
  const names: string[] = [];
  for (const stat of members) {
    for (const name of [stat.comm, argv0Of(stat.pid), executableOf(stat.pid)]) {
      if (name !== undefined && name !== '' && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

function argv0Of(pid: number): string | undefined {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const end = cmdline.indexOf('\0');
    return end < 0 ? cmdline : cmdline.slice(0, end);
  } catch {
    return undefined;
  }
}

function executableOf(pid: number): string | undefined {
  try {
    const path = readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
    return path.slice(path.lastIndexOf('/') + 1);
  } catch {
    return undefined;
  }
}
