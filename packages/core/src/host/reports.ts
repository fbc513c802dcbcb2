/**
 * Readers of the reports the host scripts print ({@link ./scripts.ts}): plain text, one fact per line, read
 * the same way whichever channel carried them. Malformed lines are skipped; nothing here trusts a report
 * to be complete.
 */

import type { EscapedProcess, EscapedScan, KillReport } from '../driver.js';
import type { InputWaitFacts, ProcSample } from '../input/input-wait.js';
import type { ProcessFactsKind } from './process-facts.js';

/** What the connect probe found on a host. */
export interface ConnectProbe {
  /** The private 0700 directory it created (empty when `mktemp -d` failed). */
  privateDir: string;
  /** The user's login shell (possibly empty). */
  loginShell: string;
  /** Path of bash (possibly empty). */
  bashPath: string;
  user: string;
  home: string;
  /** How the host's process facts are read. */
  facts: ProcessFactsKind;
}

/** Reads {@link CONNECT_PROBE}'s `key=value` lines; undefined when it printed none (no POSIX sh ran it). */
export function parseConnectProbe(text: string): ConnectProbe | undefined {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
  }
  if (values.size === 0) return undefined;
  return {
    privateDir: values.get('dir') ?? '',
    loginShell: values.get('shell') ?? '',
    bashPath: values.get('bash') ?? '',
    user: values.get('user') ?? '',
    home: values.get('home') ?? '',
    facts: values.get('facts') === 'proc' ? 'proc' : 'ps',
  };
}

/** The shells a host's login shell may be to open sessions with (others fall back to bash, then sh). */
const LOGIN_SHELLS = /(^|\/)(bash|zsh|dash|ksh|mksh|sh)$/;

/**
 * The shell a session opens on a probed host when none is asked for: the user's login shell when it is a
 * POSIX-family shell, else bash when the host has it, else `/bin/sh`.
 */
export function defaultShellOf(probe: Pick<ConnectProbe, 'loginShell' | 'bashPath'>): string {
  if (probe.loginShell && LOGIN_SHELLS.test(probe.loginShell)) return probe.loginShell;
  if (probe.bashPath) return probe.bashPath;
  return '/bin/sh';
}

/**
 * Reads {@link KILL_SCRIPT}'s `CONCH_KILL RESULT [SURVIVORS…]` line; `unsupported` when the host cannot
 * do what was asked (a job kill without process facts), and `stop_unconfirmed` when the line is missing.
 */
export function parseKillReport(text: string): KillReport | 'unsupported' {
  const line = text.split('\n').find((l) => l.startsWith('CONCH_KILL ')) ?? '';
  const [, result, ...rest] = line.trim().split(/\s+/);
  if (result === 'unsupported') return 'unsupported';
  if (result === 'already_exited' || result === 'killed') return { result, survivors: [] };
  return {
    result: 'stop_unconfirmed',
    survivors: rest.map(Number).filter((n) => Number.isInteger(n) && n > 0),
  };
}

/**
 * Reads {@link ESCAPED_SCRIPT}'s report: the processes carrying each of `entries` (the `NAME=value` marker
 * entries asked about, reported under `ids` in the same order) and the terminal's forks (other entries,
 * malformed entries and `terminal`, the terminal's own process, are left out).
 */
export function parseEscapedReport(
  text: string,
  entries: readonly string[],
  ids: readonly string[],
  terminal: number | undefined,
): EscapedScan {
  const idOf = new Map(entries.map((entry, i) => [entry, ids[i]]));
  const escaped = new Map<string, EscapedProcess[]>();
  let forks: EscapedProcess[] = [];
  for (const line of text.split('\n')) {
    const [key, ...items] = line.trim().split(/\s+/);
    const id = key === undefined ? undefined : idOf.get(key);
    if (key !== 'forks' && id === undefined) continue;
    const live: EscapedProcess[] = [];
    for (const item of items) {
      const match = /^(\d+):([A-Za-z])$/.exec(item);
      const pid = Number(match?.[1]);
      if (match && pid > 0 && pid !== terminal) live.push({ pid, state: match[2]! });
    }
    if (key === 'forks') forks = live;
    else if (id !== undefined && live.length > 0) escaped.set(id, live);
  }
  return { escaped, forks };
}

/** What {@link PROBE_SCRIPT} reports about a terminal's foreground group. */
export interface ProbeReport {
  /** How the host read them (`facts` line); undefined for an older report without it. */
  factsKind: ProcessFactsKind | undefined;
  /** The facts `decideInputWait` judges. */
  facts: InputWaitFacts;
  /** The foreground group leader's command name. */
  comm: string | undefined;
  /** The terminal's foreground process group, when known. */
  fg: number | undefined;
  /** The terminal's own process's group. */
  rootGroup: number | undefined;
  /**
   * Every name the foreground group's live processes are known by (command name, argv[0], executable's
   * base name), the leader's first; undefined when the group cannot be read.
   */
  names: string[] | undefined;
}

/**
 * Reads {@link PROBE_SCRIPT}'s report (one fact per line): `facts KIND`, `arch M`, `tty PATH`,
 * `ttynr DEVICE`, `fg GROUP ROOTGROUP`, `comm NAME`, `proc PID STATE [TTY_NR|- [TTY_PATH]]`,
 * `name PID NAME`, `wchan PID VALUE`, `syscall PID TEXT…`, `fd PID N TARGET`, `sockets PID yes|no`.
 */
export function parseProbeReport(text: string): ProbeReport {
  let factsKind: ProcessFactsKind | undefined;
  let arch: string | undefined;
  let terminal: string | undefined;
  let terminalDevice: number | undefined;
  let fg: number | undefined;
  let rootGroup: number | undefined;
  let comm: string | undefined;
  let readable = false;
  const members = new Map<number, ProcSample & { terminalFds: Map<number, string> }>();
  const names = new Map<number, string[]>();
  const deviceNumber = (text: string) => (/^\d+$/.test(text) ? Number(text) : undefined);
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const rest = space < 0 ? '' : line.slice(space + 1);
    const [a = '', b = '', ...more] = rest.split(' ');
    const member = (pid: string) => members.get(Number(pid));
    switch (key) {
      case 'facts':
        factsKind = rest.trim() === 'proc' ? 'proc' : rest.trim() === 'ps' ? 'ps' : undefined;
        break;
      case 'arch':
        arch = rest.trim() || undefined;
        break;
      case 'tty':
        terminal = rest.trim() || undefined;
        break;
      case 'ttynr':
        terminalDevice = deviceNumber(rest.trim());
        break;
      case 'fg':
        readable = true;
        fg = Number(a);
        rootGroup = Number(b);
        break;
      case 'comm':
        comm = rest || undefined;
        break;
      case 'proc': {
        const sample: ProcSample & { terminalFds: Map<number, string> } = {
          pid: Number(a),
          state: b,
          ttyNr: deviceNumber(more[0] ?? ''),
          wchan: undefined,
          syscall: undefined,
          terminalFds: new Map(),
        };
        if (more[1]) sample.tty = more[1];
        members.set(Number(a), sample);
        break;
      }
      case 'name': {
        const name = [b, ...more].join(' ');
        if (!/^\d+$/.test(a) || name === '') break;
        const list = names.get(Number(a));
        if (list) list.push(name);
        else names.set(Number(a), [name]);
        break;
      }
      case 'wchan': {
        const m = member(a);
        if (m) m.wchan = [b, ...more].join(' ');
        break;
      }
      case 'syscall': {
        const m = member(a);
        if (m) m.syscall = [b, ...more].join(' ');
        break;
      }
      case 'fd': {
        const m = member(a);
        if (m) m.terminalFds.set(Number(b), more.join(' '));
        break;
      }
      case 'sockets': {
        const m = member(a);
        if (m && (b === 'yes' || b === 'no')) m.sockets = b === 'yes';
        break;
      }
    }
  }
  const groupKnown = readable && fg !== undefined && Number.isInteger(fg) && fg > 0;
  let programNames: string[] | undefined;
  if (groupKnown) {
    programNames = [];
    const order = [...members.keys()].sort((x, y) => (x === fg ? -1 : y === fg ? 1 : x - y));
    for (const pid of order) {
      const state = members.get(pid)?.state;
      if (state === 'Z' || state === 'X') continue;
      for (const name of names.get(pid) ?? []) if (!programNames.includes(name)) programNames.push(name);
    }
  }
  return {
    factsKind,
    facts: { arch, terminal, terminalDevice, members: groupKnown ? [...members.values()] : undefined },
    comm,
    fg: groupKnown ? fg : undefined,
    rootGroup,
    names: programNames,
  };
}
