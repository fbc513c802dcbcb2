/**
 * The doors of conch that speak MCP's newline-delimited JSON-RPC, as the reliability tests reach them:
 *
 * - `stdio`: the built `conch-mcp`, spoken to on its stdin and stdout;
 * - `daemon`: the built CLI's daemon (`conch daemon run`, in a private CONCH_HOME), spoken to through its unix
 *   socket by a plain byte pipe (`fixtures/socket-pipe.mjs`, what `socat STDIO UNIX-CONNECT:` does);
 * - `relay`: `conch mcp --daemon` in front of that daemon, spoken to on its stdin and stdout.
 *
 * Each is a process with a stdin and a stdout; the engine (whose sessions and processes the tests watch) is
 * that process for `stdio` and the daemon otherwise. `CONCH_TEST_TARGETS=stdio,relay` narrows the set.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@conch/core/testing';
import { isAlive } from '@conch/node/testing';

const here = dirname(fileURLToPath(import.meta.url));
/** The built `conch-mcp`. */
export const SERVER_BIN = resolve(here, '../dist/bin.cjs');
/** The built `conch` CLI (its daemon and relay). */
export const CLI_BIN = resolve(here, '../../cli/dist/bin.cjs');
const SOCKET_PIPE = resolve(here, 'fixtures/socket-pipe.mjs');

/** Which door a test speaks to. */
export type Target = 'stdio' | 'daemon' | 'relay';

/** Every door, or those named in `CONCH_TEST_TARGETS` (comma-separated). */
export const TARGETS: readonly Target[] = (() => {
  const all: Target[] = ['stdio', 'daemon', 'relay'];
  const wanted = process.env.CONCH_TEST_TARGETS?.split(',').map((t) => t.trim());
  return wanted ? all.filter((t) => wanted.includes(t)) : all;
})();

/** Options of {@link openDoor}. */
export interface DoorOptions {
  /** Server flags (`conch-mcp ARGS`, `conch daemon run ARGS`). */
  args?: string[];
  /** Extra environment of the engine. */
  env?: Record<string, string>;
  /** Working directory of the engine. */
  cwd?: string;
  /** Flags for node itself, before the script (the engine's node). */
  nodeArgs?: string[];
  /** A program that runs the engine's node and `exec`s it (e.g. `unshare -m sh -c '… exec "$0" "$@"'`). */
  wrapper?: string[];
}

/** A door ready to be spoken to: what to spawn for the client's stdio, and the engine behind it. */
export interface Door {
  target: Target;
  /** The program (and its arguments) whose stdin and stdout carry the JSON-RPC. */
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  /** The daemon's pid (undefined for `stdio`: the spawned process is the engine). */
  daemonPid: number | undefined;
  /** What the daemon logged so far (empty for `stdio`). */
  daemonLog(): string;
  /** Stops the daemon (SIGTERM), waits until it is gone, removes its home. Nothing for `stdio`. */
  stop(): Promise<number | null>;
}

function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return Object.assign(env, extra);
}

/** Fails early with a clear message when a binary has not been built. */
export function assertBuilt(target: Target): void {
  for (const bin of target === 'stdio' ? [SERVER_BIN] : [CLI_BIN]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (turbo run build).`);
  }
}

function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswer(true);
    });
    socket.once('error', () => resolveAnswer(false));
  });
}

/** Starts what `target` needs (the daemon for `daemon` and `relay`) and says how to reach it. */
export async function openDoor(target: Target, options: DoorOptions = {}): Promise<Door> {
  assertBuilt(target);
  const node = (script: string, args: string[]) => {
    const wrapped = [...(options.nodeArgs ?? []), script, ...args];
    return options.wrapper
      ? {
          command: options.wrapper[0] as string,
          args: [...options.wrapper.slice(1), process.execPath, ...wrapped],
        }
      : { command: process.execPath, args: wrapped };
  };
  if (target === 'stdio') {
    return {
      target,
      ...node(SERVER_BIN, options.args ?? []),
      env: baseEnv(options.env),
      cwd: options.cwd,
      daemonPid: undefined,
      daemonLog: () => '',
      stop: async () => null,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'conch-door-'));
  const home = join(dir, 'home');
  const env = baseEnv({ ...options.env, CONCH_HOME: home });
  const started = node(CLI_BIN, ['daemon', 'run', ...(options.args ?? [])]);
  const daemon: ChildProcess = spawn(started.command, started.args, {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let log = '';
  daemon.stderr?.setEncoding('utf8').on('data', (d: string) => {
    log += d;
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolveExit) =>
    daemon.once('exit', (code) => {
      exitCode = code;
      resolveExit(code);
    }),
  );
  const socket = join(home, 'daemon.sock');
  const up = await waitFor(
    async () => (exitCode !== undefined ? 'exited' : (await socketAnswers(socket)) && 'up'),
    {
      timeoutMs: 30_000,
      what: `the daemon to answer on ${socket}`,
    },
  ).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}: ${log}`);
  });
  if (up === 'exited') throw new Error(`the daemon exited (${exitCode}): ${log}`);
  const pid = daemon.pid as number;
  const client =
    target === 'daemon'
      ? { command: process.execPath, args: [SOCKET_PIPE, socket] }
      : { command: process.execPath, args: [CLI_BIN, 'mcp', '--daemon'] };
  return {
    target,
    ...client,
    env,
    cwd: options.cwd,
    daemonPid: pid,
    daemonLog: () => log,
    stop: async () => {
      if (exitCode === undefined) daemon.kill('SIGTERM');
      const timer = setTimeout(() => daemon.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, what: 'the daemon to be gone' }).catch(
        () => undefined,
      );
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** The pid the daemon of a home recorded (for a relay that started its own daemon). */
export function recordedDaemonPid(home: string): number | undefined {
  try {
    return Number(readFileSync(join(home, 'daemon.pid'), 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}
