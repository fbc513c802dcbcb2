/**
 * The bubblewrap command line of a sandboxed process (docs/sandbox.md "Linux"): the whole file system
 * read-only, the writable paths bound read-write, the unreadable ones covered (an empty read-only tmpfs
 * over a directory, /dev/null over a file), a private /tmp, new user, PID, IPC, UTS and (unless the network
 * is `all`) network namespaces, no nested user namespaces, and death with conch.
 *
 * Where rules overlap, the most specific path wins (`~/.ssh` stays hidden in a writable home; the session's
 * private directory stays usable inside the hidden directory of all sessions).
 *
 * The session keeps its controlling terminal (no `--new-session`): an interactive shell needs it for job
 * control and Ctrl+C. The terminal is the session's own, read only by processes inside the sandbox, so
 * pushing input into it (TIOCSTI) reaches nobody outside.
 */

import { statSync } from 'node:fs';
import { isWithin, type SandboxLaunch } from '@conch/core';
import { canonicalPath } from './canonical-path.js';
import { proxyEnvironment } from './proxy-env.js';

/** Signals the bubblewrap processes outside the program ignore, and the program gets back (see below). */
export const TERMINAL_SIGNALS = 'INT,QUIT,TSTP';

/** The port inside the sandbox's network namespace where the host-filtering proxy is relayed. */
export const SANDBOX_PROXY_PORT = 3128;

/** What the command line is built from besides the session's rules. */
export interface BwrapPlan {
  /** The bubblewrap binary. */
  bwrap: string;
  /** The rules and the session's private directory. */
  launch: SandboxLaunch;
  /** Host directory bound as the sandbox's /tmp (the session's private temporary directory). */
  tmpDir: string;
  /** More directories to hide (the driver's directory of every session's private files). */
  hide: readonly string[];
  /** The program's working directory (kept visible, read-only unless writable). */
  cwd: string;
  /** The program and its arguments. */
  program: string;
  args: readonly string[];
  /** The host path of the proxy's socket (network is a host list); relayed to 127.0.0.1:3128 inside. */
  proxySocket?: string;
  /** socat (needed with `proxySocket`). */
  socat?: string;
}

type Mount = { path: string; order: number; args: string[] };

/** Whether `path` exists, and as a directory. */
function kindOf(path: string): 'dir' | 'file' | undefined {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/**
 * The start of every bubblewrap command line (after the program `env`): the terminal's signals ignored
 * outside the program, the namespaces (the network's when `ownNetwork`), no capabilities, no nested user
 * namespaces, death with conch, and the read-only root with a fresh /dev and /proc.
 */
export function sandboxBase(bwrap: string, ownNetwork: boolean): string[] {
  return [
    `--ignore-signal=${TERMINAL_SIGNALS}`,
    bwrap,
    '--die-with-parent',
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // No capabilities inside, even for root (bubblewrap keeps them for a root caller otherwise).
    '--cap-drop',
    'ALL',
    ...(ownNetwork ? ['--unshare-net'] : []),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
}

/** The program part of a sandboxed command line: `env` gives it back the terminal's signals. */
export function restoredSignals(program: string, args: readonly string[]): string[] {
  return ['env', `--default-signal=${TERMINAL_SIGNALS}`, program, ...args];
}

/** The environment a sandboxed program gets on top of its own. */
export function sandboxEnvironment(plan: Pick<BwrapPlan, 'proxySocket'>): Record<string, string> {
  const env: Record<string, string> = { TMPDIR: '/tmp' };
  if (plan.proxySocket !== undefined) {
    Object.assign(env, proxyEnvironment(`http://127.0.0.1:${SANDBOX_PROXY_PORT}`));
  }
  return env;
}

/**
 * The argv (after the program `env`) of a sandboxed process: `env` ignores the terminal's signals in the
 * bubblewrap processes, so that Ctrl+C reaches only the program, and the program gets them back.
 */
export function bwrapCommandLine(plan: BwrapPlan): string[] {
  const { rules } = plan.launch;
  const mounts: Mount[] = [];
  const add = (path: string, order: number, ...args: string[]) => mounts.push({ path, order, args });
  add('/tmp', 0, '--bind', plan.tmpDir, '/tmp');
  const hidden: string[] = [];
  for (const path of [...rules.deny_read, ...plan.hide].map(canonicalPath)) {
    const kind = kindOf(path);
    if (kind === 'dir') {
      add(path, 2, '--tmpfs', path);
      hidden.push(path);
    } else if (kind === 'file') {
      add(path, 2, '--ro-bind', '/dev/null', path);
    }
  }
  for (const path of [...rules.write, plan.launch.privateDir].map(canonicalPath)) {
    if (kindOf(path) !== undefined) add(path, 1, '--bind', path, path);
  }
  const cwd = canonicalPath(plan.cwd);
  // The working directory stays visible where the private /tmp would cover it (never where it is hidden).
  const covered = [...rules.write, ...rules.deny_read, ...plan.hide].map(canonicalPath);
  if (!covered.some((p) => isWithin(cwd, p)) && kindOf(cwd) === 'dir') {
    add(cwd, 1, '--ro-bind', cwd, cwd);
  }
  // Shallow paths first, so that a deeper rule is mounted over a shallower one; at one path, hiding wins.
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.order - b.order);
  const argv = [
    ...sandboxBase(plan.bwrap, rules.network !== 'all'),
    ...mounts.flatMap((m) => m.args),
    // A hidden directory is read-only once everything inside it is mounted.
    ...hidden.flatMap((path) => ['--remount-ro', path]),
    '--chdir',
    cwd,
    '--',
  ];
  const program = restoredSignals(plan.program, plan.args);
  if (plan.proxySocket === undefined || plan.socat === undefined) return [...argv, ...program];
  // The network namespace is empty: relay 127.0.0.1:3128 to the host's proxy through its socket, and
  // start the program once the relay listens.
  const relay = [
    `${quote(plan.socat)} TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${quote(plan.proxySocket)} </dev/null >/dev/null 2>&1 &`,
    `for _ in $(seq 400); do (: <>/dev/tcp/127.0.0.1/${SANDBOX_PROXY_PORT}) 2>/dev/null && break; sleep 0.005; done`,
    'exec "$@"',
  ].join('\n');
  return [...argv, '/bin/bash', '-c', relay, 'conch-sandbox', ...program];
}

/** What {@link joinCommandLine} needs: the tools and the program. */
export interface JoinPlan {
  nsenter: string;
  setpriv: string;
  /** Host pid of a process inside the sandbox to join (the session's shell). */
  target: number;
  cwd: string;
  program: string;
  args: readonly string[];
}

/**
 * The argv (after the program `env`) of a process that joins a running sandbox (the session shell's) with
 * util-linux's nsenter: its user, mount, PID, network, IPC and UTS namespaces (so the same file system,
 * /tmp, network and proxy relay), without capabilities and without gaining privileges. Its escaped processes live in
 * the session's PID namespace, as long as the session.
 */
export function joinCommandLine(plan: JoinPlan): string[] {
  return [
    `--ignore-signal=${TERMINAL_SIGNALS}`,
    plan.nsenter,
    `--target=${plan.target}`,
    '--user',
    '--mount',
    '--pid',
    '--net',
    '--ipc',
    '--uts',
    '--preserve-credentials',
    `--wd=${plan.cwd}`,
    '--',
    plan.setpriv,
    '--no-new-privs',
    '--bounding-set=-all',
    '--inh-caps=-all',
    '--',
    ...restoredSignals(plan.program, plan.args),
  ];
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

/** Single-quotes a word for bash. */
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
