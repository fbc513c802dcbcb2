/**
 * The portable implementation of the core's `ProcessFacts`: every fact from `ps` (POSIX options, with
 * the BSD `e` flag for environments), and the open files of a terminal's foreground group from `lsof`
 * where a decision needs them. Works on macOS, the BSDs and Linux; chosen where `/proc` is missing, or
 * with `CONCH_PROCESS_FACTS=ps`. Without a session column in every `ps`, sessions are left unknown;
 * environments are readable for this user's own processes only (all of them for root).
 */

import { execFile, execFileSync } from 'node:child_process';
import { type InputWaitFacts, POLL_WAIT_CHANNEL, type ProcSample } from '@conch/core';
import {
  type HostProcess,
  isEndedState,
  isTerminalPath,
  LSOF_SOCKET_TYPES,
  type ProcessFacts,
} from '@conch/core/host';

/** Most bytes one `ps` or `lsof` report may have (every process's environment can be large). */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;
/** How long one `ps` or `lsof` may take. */
const REPORT_TIMEOUT_MS = 15_000;

/**
 * Runs `program` with `args` and resolves with its output, also when it exits non-zero (`ps -p` and `lsof -p`
 * do when a process asked about is gone); rejects when it cannot run.
 */
function report(program: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      {
        // Dates, names and numbers in the C locale; the local time zone, as `lstart` prints it.
        env: { ...process.env, LC_ALL: 'C' },
        maxBuffer: MAX_REPORT_BYTES,
        timeout: REPORT_TIMEOUT_MS,
        encoding: 'latin1',
      },
      (error, stdout) => {
        if (!error || typeof (error as { code?: unknown }).code === 'number') resolve(stdout);
        else reject(error);
      },
    );
  });
}

/** The wait-channel column, under a header wide enough that `ps` does not cut the names short. */
const WCHAN_COLUMN = `wchan=WCHAN${'_'.repeat(48)}`;

/** The columns of the process table, in order (`lstart` is five words, `comm` the rest of the line). */
const TABLE_COLUMNS = ['pid', 'ppid', 'pgid', 'tpgid', 'stat', 'tty', 'rss', WCHAN_COLUMN, 'lstart', 'comm'];

/** `-o` options for `columns`, one each (a header may hold a comma). */
function columnOptions(columns: readonly string[]): string[] {
  return columns.flatMap((column) => ['-o', column]);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `lstart` (`Thu Nov 26 17:52:15 2026`, local time) in seconds since the epoch, or undefined. */
export function parseStartTime(words: readonly string[]): number | undefined {
  const [, month, day, clock, year] = words;
  const m = MONTHS.indexOf(month ?? '');
  const hms = /^(\d+):(\d+):(\d+)$/.exec(clock ?? '');
  if (m < 0 || !hms || !/^\d+$/.test(day ?? '') || !/^\d{4}$/.test(year ?? '')) return undefined;
  const at = new Date(Number(year), m, Number(day), Number(hms[1]), Number(hms[2]), Number(hms[3]));
  return Math.floor(at.getTime() / 1000);
}

/** One state letter from `stat` (`Ss+`, `R`, BSD `I` idle → `S`, BSD `U` uninterruptible → `D`). */
function stateLetter(stat: string): string {
  const letter = stat.charAt(0) || '?';
  return letter === 'I' ? 'S' : letter === 'U' ? 'D' : letter;
}

/** A `tty` column as a device path (`pts/3` → `/dev/pts/3`); undefined for none (`?`, `??`, `-`). */
function devicePath(tty: string): string | undefined {
  return /^[?-]+$/.test(tty) || tty === '' ? undefined : `/dev/${tty}`;
}

/** One row of the table, with its wait channel. */
interface PsRow extends HostProcess {
  wchan: string | undefined;
}

/** Reads the table `ps` printed with {@link TABLE_COLUMNS} (after its header line). */
export function parseProcessTable(text: string): PsRow[] {
  const rows: PsRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const words = line.trim().split(/\s+/);
    if (words.length < 14) continue;
    const [pid, ppid, pgid, tpgid, stat, tty, rss, wchan] = words as [string, ...string[]];
    if (!/^\d+$/.test(pid)) continue;
    const group = Number(tpgid);
    const comm = words.slice(13).join(' ');
    rows.push({
      pid: Number(pid),
      ppid: Number(ppid),
      pgid: Number(pgid),
      sid: undefined,
      tpgid: Number.isInteger(group) && group > 0 ? group : undefined,
      state: stateLetter(stat ?? ''),
      comm: comm.slice(comm.lastIndexOf('/') + 1),
      terminal: devicePath(tty ?? ''),
      terminalDevice: undefined,
      startTime: parseStartTime(words.slice(8, 13)),
      rssKb: /^\d+$/.test(rss ?? '') ? Number(rss) : undefined,
      wchan: wchan === undefined || wchan === '-' ? undefined : wchan,
    });
  }
  return rows;
}

/** Reads `pid command` lines (`ps -o pid= -o command=`) into the command line by pid. */
function parseCommandLines(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of text.split('\n')) {
    const match = /^\s*(\d+) (.*)$/.exec(line);
    if (match) out.set(Number(match[1]), match[2]!);
  }
  return out;
}

/** What `lsof` says about a process's open files: its terminal fds, and whether it has a socket open. */
interface OpenFiles {
  terminalFds: Map<number, string>;
  sockets: boolean;
}

/** File types `lsof` gives sockets. */
const SOCKET_TYPES = new RegExp(LSOF_SOCKET_TYPES);

/** Reads `lsof -F ftn` output into each process's open files. */
export function parseOpenFiles(text: string): Map<number, OpenFiles> {
  const out = new Map<number, OpenFiles>();
  let current: OpenFiles | undefined;
  let fd: number | undefined;
  for (const line of text.split('\n')) {
    const field = line.charAt(0);
    const value = line.slice(1);
    if (field === 'p') {
      current = { terminalFds: new Map(), sockets: false };
      out.set(Number(value), current);
      fd = undefined;
    } else if (field === 'f') {
      fd = /^\d+$/.test(value) ? Number(value) : undefined;
    } else if (field === 't' && current && SOCKET_TYPES.test(value)) {
      current.sockets = true;
    } else if (field === 'n' && current && fd !== undefined && isTerminalPath(value)) {
      current.terminalFds.set(fd, value);
    }
  }
  return out;
}

/** Whether a member sleeping in `wchan` needs its open files to be judged (polls, or a shared read wait). */
function needsOpenFiles(wchan: string | undefined): boolean {
  return wchan !== undefined && (POLL_WAIT_CHANNEL.test(wchan) || wchan === 'wait_woken');
}

/** Every name a process is known by, from its `comm` and `args` columns (argv[0] up to its first space). */
function namesOf(comm: string | undefined, args: string | undefined): string[] {
  const names: string[] = [];
  const base = comm?.slice(comm.lastIndexOf('/') + 1);
  const argv0 = args?.split(' ')[0];
  for (const name of [base, argv0]) if (name && !names.includes(name)) names.push(name);
  return names;
}

/** The process facts of this host, from `ps` and `lsof` (see the module doc). */
export class PsProcessFacts implements ProcessFacts {
  readonly kind = 'ps' as const;
  private static own: { startTime: number | undefined } | undefined;

  /** This process's start time (seconds since the epoch), asked of `ps` synchronously once. */
  static ownStartTime(): number | undefined {
    if (PsProcessFacts.own === undefined) {
      let startTime: number | undefined;
      try {
        const out = execFileSync('ps', ['-p', String(process.pid), '-o', 'lstart='], {
          env: { ...process.env, LC_ALL: 'C' },
          encoding: 'latin1',
          timeout: REPORT_TIMEOUT_MS,
        });
        startTime = parseStartTime(out.trim().split(/\s+/));
      } catch {
        startTime = undefined;
      }
      PsProcessFacts.own = { startTime };
    }
    return PsProcessFacts.own.startTime;
  }

  async processes(): Promise<HostProcess[]> {
    return (await this.table(['-A'])).map(withoutWchan);
  }

  async process(pid: number): Promise<HostProcess | undefined> {
    const row = (await this.table(['-p', String(pid)])).find((r) => r.pid === pid);
    return row && withoutWchan(row);
  }

  async alive(pids: readonly number[]): Promise<number[]> {
    if (pids.length === 0) return [];
    const out = await report('ps', ['-p', pids.join(','), '-o', 'pid=', '-o', 'stat=']);
    const live = new Set<number>();
    for (const line of out.split('\n')) {
      const [pid, stat] = line.trim().split(/\s+/);
      if (pid && /^\d+$/.test(pid) && !isEndedState(stateLetter(stat ?? ''))) live.add(Number(pid));
    }
    return pids.filter((pid) => live.has(pid));
  }

  async markers(
    names: readonly string[],
    pids?: readonly number[],
  ): Promise<Map<number, Map<string, string>>> {
    const out = new Map<number, Map<string, string>>();
    if (pids !== undefined && pids.length === 0) return out;
    const select = pids === undefined ? ['ax'] : ['-p', pids.join(',')];
    // The same command lines without and with the environment (BSD `e`): what follows the first is the
    // environment, so a command's arguments are never taken for its markers.
    const [plain, withEnv] = await Promise.all([
      report('ps', [...select, 'ww', '-o', 'pid=', '-o', 'command=']),
      report('ps', [...select, 'eww', '-o', 'pid=', '-o', 'command=']),
    ]);
    const args = parseCommandLines(plain);
    const prefixes = names.map((name) => `${name}=`);
    for (const [pid, line] of parseCommandLines(withEnv)) {
      const command = args.get(pid);
      if (command === undefined || !line.startsWith(command)) continue;
      let found: Map<string, string> | undefined;
      for (const word of line.slice(command.length).split(' ')) {
        const at = prefixes.findIndex((prefix) => word.startsWith(prefix));
        if (at < 0) continue;
        found ??= new Map();
        if (!found.has(names[at]!)) found.set(names[at]!, word.slice(prefixes[at]!.length));
      }
      if (found) out.set(pid, found);
    }
    return out;
  }

  async programNames(pids: readonly number[]): Promise<string[]> {
    if (pids.length === 0) return [];
    const list = pids.join(',');
    const [comms, args] = await Promise.all([
      report('ps', ['-p', list, '-o', 'pid=', '-o', 'stat=', '-o', 'comm=']),
      report('ps', ['-p', list, 'ww', '-o', 'pid=', '-o', 'command=']),
    ]);
    const command = parseCommandLines(args);
    const live = new Map<number, string>();
    for (const [pid, rest] of parseCommandLines(comms)) {
      const match = /^(\S+)\s+(.*)$/.exec(rest);
      if (match && !isEndedState(stateLetter(match[1]!))) live.set(pid, match[2]!);
    }
    const names: string[] = [];
    for (const pid of pids) {
      if (!live.has(pid)) continue;
      for (const name of namesOf(live.get(pid), command.get(pid)))
        if (!names.includes(name)) names.push(name);
    }
    return names;
  }

  async inputWait(leader: number, terminal: string | undefined): Promise<InputWaitFacts> {
    const unknown = { arch: process.arch, terminal, terminalDevice: undefined, members: undefined };
    const device = terminal ?? (await this.process(leader))?.terminal;
    if (device === undefined) return unknown;
    // The processes on the terminal: its foreground group's members are among them.
    const rows = await this.table(['-t', device.replace(/^\/dev\//, '')]);
    const group = rows.find((r) => r.pid === leader)?.tpgid;
    if (group === undefined) return unknown;
    const members = rows.filter((r) => r.pgid === group && !isEndedState(r.state));
    const judged = members.filter((r) => needsOpenFiles(r.wchan)).map((r) => r.pid);
    const files =
      judged.length === 0
        ? new Map<number, OpenFiles>()
        : await report('lsof', ['-w', '-n', '-P', '-a', '-p', judged.join(','), '-d', '0-1023', '-F', 'ftn'])
            .then((out) => parseOpenFiles(out))
            .catch(() => undefined);
    const samples: ProcSample[] = members.map((r) => {
      const open = files?.get(r.pid);
      return {
        pid: r.pid,
        state: r.state,
        ttyNr: undefined,
        tty: r.terminal,
        wchan: r.wchan ?? (r.state === 'R' ? '' : undefined),
        syscall: undefined,
        terminalFds: open?.terminalFds ?? new Map(),
        // Without lsof (or for a process it cannot look into) whether it has a socket is unknown.
        sockets: open?.sockets,
      };
    });
    return { arch: process.arch, terminal: device, terminalDevice: undefined, members: samples };
  }

  /** The process table of the processes `select` picks (`-A`, `-p PID`, `-t TTY`). */
  private async table(select: readonly string[]): Promise<PsRow[]> {
    const out = await report('ps', [...select, ...columnOptions(TABLE_COLUMNS)]);
    return parseProcessTable(out);
  }
}

function withoutWchan(row: PsRow): HostProcess {
  const { wchan: _wchan, ...process } = row;
  return process;
}
