/**
 * The CLI's side of the daemon: find it (starting it on first use, recovering from a stale socket or a
 * crashed daemon), connect an MCP client ({@link DaemonRpc}) over the socket, stop it, and ask its status.
 * Status and stop agree: both ask the daemon answering on the socket who it is, and fall back to the pid
 * file only for a daemon process that lost its socket.
 */

import { closeSync, openSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { VOCABULARY_CAPABILITY } from '@conch/mcp/vocabulary';
import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  askDaemonIdentity,
  isDaemonProcess,
  previousDaemon,
  readDaemonPid,
  socketAnswers,
} from './daemon-probe.js';
import { DaemonRpc } from './daemon-rpc.js';
import { type DaemonPaths, daemonPaths, ensurePrivateDir } from './paths.js';
import { CLI_VOCABULARY } from './tool-call.js';
import { askOnTty, canAskOnTty } from './tty-question.js';
import { CLI_VERSION } from './version.js';

/** How long a starting daemon may take to answer on its socket. */
const DAEMON_START_TIMEOUT_MS = 15_000;
/** How long a stopping daemon may take to exit (its own deadline is 5 s). */
const DAEMON_STOP_TIMEOUT_MS = 10_000;

/** The built CLI (`dist/bin.cjs`, the package's bin), which runs the daemon with `daemon run`. */
const BIN = fileURLToPath(new URL('./bin.cjs', import.meta.url));

/** Polls `check` until it is true or `timeoutMs` passes; resolves with the last answer. */
async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What {@link ensureDaemon} did. */
export interface DaemonStart {
  /** A daemon was started (none answered). */
  started: boolean;
  /**
   * It replaced one that died without shutting down (`crashed`) or that was stopped (`stopped`): the
   * sessions and commands of before are gone.
   */
  replaced?: 'crashed' | 'stopped';
}

/**
 * Makes sure a daemon answers on the socket, starting one (detached, its stderr in the log file) when
 * none does. A stale socket left by a crashed daemon is removed by the new daemon, which also reaps the
 * processes the dead one left.
 */
export async function ensureDaemon(paths: DaemonPaths = daemonPaths()): Promise<DaemonStart> {
  if (await socketAnswers(paths.socket)) return { started: false };
  ensurePrivateDir(paths.dir);
  const previous = previousDaemon(paths);
  // Loaded only when a daemon must be started, not at every start of the CLI.
  const { spawn } = await import('node:child_process');
  const log = openSync(paths.logFile, 'a', 0o600);
  let exitCode: number | null | undefined;
  try {
    const child = spawn(process.execPath, [BIN, 'daemon', 'run'], {
      detached: true,
      stdio: ['ignore', log, log],
      env: process.env,
    });
    child.once('exit', (code) => {
      exitCode = code;
    });
    child.unref();
  } finally {
    closeSync(log);
  }
  const up = await waitFor(
    async () => exitCode !== undefined || (await socketAnswers(paths.socket)),
    DAEMON_START_TIMEOUT_MS,
  );
  // A daemon that exited at once may have lost a start race to another one that answers now.
  if (!up || !(await socketAnswers(paths.socket))) {
    throw new Error(`The conch daemon did not start; see its log: ${paths.logFile}`);
  }
  return { started: true, ...(previous ? { replaced: previous } : {}) };
}

/** A connected MCP client of the daemon. */
export interface DaemonConnection {
  client: DaemonRpc;
  /** What connecting did to start the daemon. */
  start: DaemonStart;
  close(): Promise<void>;
}

/** Connects to the daemon's socket (rejects when nothing accepts connections there). */
function connectSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Opens a raw socket to the daemon, starting it on first use. A running daemon is connected to at once,
 * without a probe first: every connection costs the daemon an MCP server of its own.
 */
export async function openDaemonSocket(
  paths: DaemonPaths = daemonPaths(),
): Promise<{ socket: Socket; start: DaemonStart }> {
  try {
    return { socket: await connectSocket(paths.socket), start: { started: false } };
  } catch {
    const start = await ensureDaemon(paths);
    return { socket: await connectSocket(paths.socket), start };
  }
}

/** Connects an MCP client to the daemon (starting it on first use). */
export async function connectDaemon(paths: DaemonPaths = daemonPaths()): Promise<DaemonConnection> {
  const { socket, start } = await openDaemonSocket(paths);
  // The CLI's words for the operations: the daemon words hints, errors and notices with them. On a
  // terminal the CLI can also answer the daemon's questions for the person (elicitation, yes/no).
  const interactive = canAskOnTty();
  const client = new DaemonRpc(socket);
  if (interactive) {
    client.onRequest('elicitation/create', (params) => askOnTty(params as ElicitRequest['params']));
  }
  await client.initialize(
    { name: 'conch-cli', version: CLI_VERSION },
    {
      experimental: { [VOCABULARY_CAPABILITY]: CLI_VOCABULARY },
      ...(interactive ? { elicitation: { form: {} } } : {}),
    },
  );
  return { client, start, close: () => client.close() };
}

/** What `conch daemon status` reports. */
export interface DaemonStatus {
  /** A daemon answers on the socket. */
  running: boolean;
  /** The daemon's pid: as it says itself, or (not running) a daemon process that lost its socket. */
  pid?: number;
  /** A daemon process still runs although its socket is gone (it stops by itself, or with `stop`). */
  socketless?: boolean;
  socket: string;
  log: string;
}

/** Whether a daemon answers, and its pid (see the module doc). */
export async function daemonStatus(paths: DaemonPaths = daemonPaths()): Promise<DaemonStatus> {
  const where = { socket: paths.socket, log: paths.logFile };
  const identity = await askDaemonIdentity(paths.socket);
  if (identity) return { running: true, pid: identity.pid, ...where };
  if (await socketAnswers(paths.socket)) {
    // Something answers without saying who it is (a daemon of an older conch).
    const pid = readDaemonPid(paths);
    return { running: true, ...(pid === undefined ? {} : { pid }), ...where };
  }
  const pid = readDaemonPid(paths);
  if (pid !== undefined && isDaemonProcess(pid)) return { running: false, pid, socketless: true, ...where };
  return { running: false, ...where };
}

/**
 * Stops the daemon (SIGTERM: every process it started is killed) and waits until it has exited.
 * Resolves with whether one was running (answering, or a daemon process that lost its socket).
 */
export async function stopDaemon(paths: DaemonPaths = daemonPaths()): Promise<boolean> {
  const status = await daemonStatus(paths);
  if (status.pid === undefined) return false;
  const pid = status.pid;
  process.kill(pid, 'SIGTERM');
  const gone = await waitFor(() => !isAlive(pid), DAEMON_STOP_TIMEOUT_MS);
  if (!gone)
    throw new Error(`The conch daemon (pid ${pid}) did not stop within ${DAEMON_STOP_TIMEOUT_MS / 1000} s.`);
  return true;
}
