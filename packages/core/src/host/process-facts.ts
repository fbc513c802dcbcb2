/**
 * The one interface to a host's process facts (docs/drivers.md): the process table (parents, process groups,
 * sessions, controlling terminals and their foreground groups, states, start times, memory), the
 * environment markers conch tags its processes with, the names a program is known by, and the raw facts
 * about a terminal's foreground group that `decideInputWait` judges. Two implementations live in
 * `@conch/node`: `proc` (Linux's `/proc`) and `ps` (the portable `ps`, with `lsof` for open files), chosen
 * at start (`/proc` when present; `CONCH_PROCESS_FACTS=ps` forces the portable one). A driver over a
 * channel reads the same facts with the host scripts (`HostScripts`), which say which kind they used.
 */

import type { InputWaitFacts } from '../input/input-wait.js';

/** How a host's process facts are read: `proc` from Linux's `/proc`, `ps` from the portable `ps`. */
export type ProcessFactsKind = 'proc' | 'ps';

/** One process as a host's process table shows it. */
export interface HostProcess {
  pid: number;
  /** Parent pid (1, or a subreaper, once its parent is gone). */
  ppid: number;
  /** Process group. */
  pgid: number;
  /** Session (its leader's pid); undefined where the host's `ps` does not show it (macOS). */
  sid: number | undefined;
  /** The foreground process group of its controlling terminal; undefined when it has none. */
  tpgid: number | undefined;
  /**
   * One state letter: `R` running, `S` sleeping, `D` uninterruptible wait, `T`/`t` stopped, `Z` zombie,
   * `X` dead (a BSD idle `I` reads as `S`, an uninterruptible `U` as `D`).
   */
  state: string;
  /** The command name as the kernel keeps it (Linux: at most 15 characters). */
  comm: string;
  /** Its controlling terminal's device path (`/dev/pts/3`, `/dev/ttys004`); undefined when it has none. */
  terminal: string | undefined;
  /** Its controlling terminal's device number (Linux `tty_nr`); undefined when unknown or none. */
  terminalDevice: number | undefined;
  /** When it started, in whole seconds since the epoch; undefined when unknown. */
  startTime: number | undefined;
  /** Resident memory in KiB; undefined when unknown. */
  rssKb: number | undefined;
}

/** A host's process facts (see the module doc). Every method tolerates processes vanishing meanwhile. */
export interface ProcessFacts {
  /** Which implementation answers. */
  readonly kind: ProcessFactsKind;
  /** Every process of the host, in one look. */
  processes(): Promise<HostProcess[]>;
  /** One process, or undefined once it is gone. */
  process(pid: number): Promise<HostProcess | undefined>;
  /** Which of `pids` are still alive (zombies count as gone). */
  alive(pids: readonly number[]): Promise<number[]>;
  /**
   * The values of the environment variables `names` in the initial environment of every process that
   * carries any of them and whose environment this user may read (only `pids`, when given).
   */
  markers(names: readonly string[], pids?: readonly number[]): Promise<Map<number, Map<string, string>>>;
  /**
   * Every name each of `pids` is known by — command name, argv[0], executable's base name — each once,
   * in the order of `pids`.
   */
  programNames(pids: readonly number[]): Promise<string[]>;
  /**
   * The facts `decideInputWait` judges about the foreground group of the terminal `terminal` (its device
   * path, when known) whose session leader is `leader`.
   */
  inputWait(leader: number, terminal: string | undefined): Promise<InputWaitFacts>;
}

/**
 * The file types `lsof` gives sockets (an extended regular expression, for JavaScript and `awk` alike):
 * a terminal read and a socket read sleep in the same Linux wait channel, so `ps`-based facts ask `lsof`
 * whether a process has a socket open.
 */
export const LSOF_SOCKET_TYPES = '^(IPv4|IPv6|unix|sock|inet|inet6|netlink|systm)$';

/**
 * Whether an open file's path is a terminal: a pseudo-terminal, a tty, or `/dev/console` (a sandbox's view
 * of its terminal: bubblewrap binds the terminal there).
 */
export function isTerminalPath(path: string): boolean {
  return path.startsWith('/dev/pts/') || path.startsWith('/dev/tty') || path === '/dev/console';
}

/** Whether a state letter means the process has ended (zombie or dead). */
export function isEndedState(state: string): boolean {
  return state === 'Z' || state === 'X';
}

/** The descendants of `root` in `table` (not `root` itself), nearest first. */
export function descendantsOf(root: number, table: readonly HostProcess[]): number[] {
  const children = new Map<number, number[]>();
  for (const p of table) {
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const seen = new Set<number>([root]);
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  for (let i = 0; i < queue.length; i++) {
    const pid = queue[i]!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * The live members of the foreground process group of the terminal whose session leader is `leader`
 * (the group leader first, then by pid), with that group; undefined when the terminal has none.
 */
export function foregroundGroupOf(
  leader: number,
  table: readonly HostProcess[],
): { group: number; members: HostProcess[] } | undefined {
  const group = table.find((p) => p.pid === leader)?.tpgid;
  if (group === undefined || group <= 0) return undefined;
  const members = table
    .filter((p) => p.pgid === group && !isEndedState(p.state))
    .sort((a, b) => (a.pid === group ? -1 : b.pid === group ? 1 : a.pid - b.pid));
  return { group, members };
}
