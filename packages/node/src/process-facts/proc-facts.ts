/**
 * The Linux implementation of the core's `ProcessFacts`: every fact read from `/proc` (the only reader of
 * `/proc` in conch's drivers). Synchronous reads under an async interface; every reader tolerates a
 * process vanishing mid-read.
 */

import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { InputWaitFacts, ProcSample } from '@conch/core';
import { type HostProcess, isEndedState, isTerminalPath, type ProcessFacts } from '@conch/core/host';

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
  /** Start time in clock ticks since boot. */
  startTime: number;
  /** Resident set size in pages. */
  rssPages: number;
}

/** Whether Linux's `/proc` is readable on this host. */
export function procAvailable(): boolean {
  return existsSync('/proc/self/stat');
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
    rssPages: Number(fields[21]),
  };
}

/** Every pid currently in `/proc`. */
export function listProcPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** Clock ticks per second of `/proc/PID/stat` times (`USER_HZ`, 100 on every Linux conch runs on). */
const USER_HZ = 100;
let bootTime: number | undefined;
let pageKb: number | undefined;

/**
 * The page size in KiB of `/proc/PID/stat`'s rss, found once from this process's own resident memory
 * (4 on x86-64; 4, 16 or 64 on arm64 kernels).
 */
function pageSizeKb(): number {
  if (pageKb === undefined) {
    const pages = readProcStat(process.pid)?.rssPages ?? 0;
    const estimate = pages > 0 ? process.memoryUsage.rss() / 1024 / pages : 4;
    pageKb = [4, 16, 64].reduce((best, size) =>
      Math.abs(size - estimate) < Math.abs(best - estimate) ? size : best,
    );
  }
  return pageKb;
}

/** The boot time in seconds since the epoch (`btime` of `/proc/stat`), read once. */
function bootSeconds(): number | undefined {
  if (bootTime === undefined) {
    try {
      const match = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
      if (match) bootTime = Number(match[1]);
    } catch {
      // no /proc/stat: start times unknown
    }
  }
  return bootTime;
}

/** A terminal's device path from its Linux device number (`tty_nr`), for pseudo-terminals. */
function terminalPath(ttyNr: number): string | undefined {
  if (ttyNr <= 0) return undefined;
  const major = (ttyNr >> 8) & 0xfff;
  const minor = (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00);
  // Unix98 pseudo-terminals have majors 136-143.
  return major >= 136 && major <= 143 ? `/dev/pts/${(major - 136) * 256 + minor}` : undefined;
}

/** A `/proc/PID/stat` record as the core's `HostProcess`. */
function toHostProcess(stat: ProcStat): HostProcess {
  const boot = bootSeconds();
  return {
    pid: stat.pid,
    ppid: stat.ppid,
    pgid: stat.pgrp,
    sid: stat.session,
    tpgid: stat.tpgid > 0 ? stat.tpgid : undefined,
    state: stat.state,
    comm: stat.comm,
    terminal: terminalPath(stat.ttyNr),
    terminalDevice: stat.ttyNr > 0 ? stat.ttyNr : undefined,
    startTime:
      boot === undefined || !Number.isFinite(stat.startTime)
        ? undefined
        : Math.floor(boot + stat.startTime / USER_HZ),
    rssKb: Number.isFinite(stat.rssPages) ? stat.rssPages * pageSizeKb() : undefined,
  };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The initial environment of `pid` as `NAME=value` entries, or undefined when it cannot be read. */
function readEnviron(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return undefined;
  }
}

/** The link targets of `pid`'s open fds that are terminals, by fd number. */
function terminalFds(pid: number): Map<number, string> {
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
      if (isTerminalPath(target)) out.set(Number(fd), target);
    } catch {
      // fd closed meanwhile
    }
  }
  return out;
}

/** The process facts of this Linux host, from `/proc` (see the module doc). */
export class ProcProcessFacts implements ProcessFacts {
  readonly kind = 'proc' as const;

  /** Every process, synchronously. */
  processesNow(): HostProcess[] {
    const out: HostProcess[] = [];
    for (const pid of listProcPids()) {
      const stat = readProcStat(pid);
      if (stat) out.push(toHostProcess(stat));
    }
    return out;
  }

  /** One process, synchronously. */
  processNow(pid: number): HostProcess | undefined {
    const stat = readProcStat(pid);
    return stat ? toHostProcess(stat) : undefined;
  }

  async processes(): Promise<HostProcess[]> {
    return this.processesNow();
  }

  async process(pid: number): Promise<HostProcess | undefined> {
    return this.processNow(pid);
  }

  async alive(pids: readonly number[]): Promise<number[]> {
    return pids.filter((pid) => {
      const stat = readProcStat(pid);
      return stat !== undefined && !isEndedState(stat.state);
    });
  }

  async markers(
    names: readonly string[],
    pids?: readonly number[],
  ): Promise<Map<number, Map<string, string>>> {
    const out = new Map<number, Map<string, string>>();
    const prefixes = names.map((name) => `${name}=`);
    for (const pid of pids ?? listProcPids()) {
      const environ = readEnviron(pid);
      if (environ === undefined) continue;
      let found: Map<string, string> | undefined;
      for (const entry of environ) {
        const at = prefixes.findIndex((prefix) => entry.startsWith(prefix));
        if (at < 0) continue;
        found ??= new Map();
        if (!found.has(names[at]!)) found.set(names[at]!, entry.slice(prefixes[at]!.length));
      }
      if (found) out.set(pid, found);
    }
    return out;
  }

  async programNames(pids: readonly number[]): Promise<string[]> {
    const names: string[] = [];
    for (const pid of pids) {
      const stat = readProcStat(pid);
      if (!stat || isEndedState(stat.state)) continue;
      for (const name of [stat.comm, argv0Of(pid), executableOf(pid)]) {
        if (name !== undefined && name !== '' && !names.includes(name)) names.push(name);
      }
    }
    return names;
  }

  async inputWait(leader: number, terminal: string | undefined): Promise<InputWaitFacts> {
    const root = readProcStat(leader);
    const terminalDevice = root && root.ttyNr > 0 ? root.ttyNr : undefined;
    const group = root && root.tpgid > 0 ? root.tpgid : undefined;
    if (group === undefined) return { arch: process.arch, terminal, terminalDevice, members: undefined };
    const members: ProcSample[] = [];
    for (const pid of listProcPids()) {
      const stat = readProcStat(pid);
      if (!stat || stat.pgrp !== group) continue;
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
}

function argv0Of(pid: number): string | undefined {
  const cmdline = readOptional(`/proc/${pid}/cmdline`);
  if (cmdline === undefined) return undefined;
  const end = cmdline.indexOf('\0');
  return end < 0 ? cmdline : cmdline.slice(0, end);
}

function executableOf(pid: number): string | undefined {
  try {
    const path = readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
    return path.slice(path.lastIndexOf('/') + 1);
  } catch {
    return undefined;
  }
}
