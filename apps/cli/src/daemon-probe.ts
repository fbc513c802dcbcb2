/**
 * What a client asks about the per-user daemon without loading it: whether its socket answers, who answers
 * (`conch/status`), the pid it recorded, and what a daemon that is gone left behind (the daemon itself,
 * with the whole server, is in daemon.ts).
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { type DaemonIdentity, daemonIdentityOf } from './daemon-methods.js';
import type { DaemonPaths } from './paths.js';

/** True when something accepts connections on the socket (a live daemon). */
export function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket: Socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Asks the daemon on the socket who it is (`conch/status`, one JSON-RPC line each way); undefined when
 * nothing answers or the answer is not a daemon's.
 */
export function askDaemonIdentity(socketPath: string, timeoutMs = 5000): Promise<DaemonIdentity | undefined> {
  return new Promise((resolve) => {
    const socket: Socket = connect(socketPath);
    let text = '';
    const done = (identity: DaemonIdentity | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(identity);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('connect', () => {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'status', method: 'conch/status' })}\n`);
    });
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      for (const line of text.split('\n').slice(0, -1)) {
        try {
          const message = JSON.parse(line) as { id?: unknown; result?: unknown };
          if (message.id !== 'status') continue;
          done(daemonIdentityOf(message.result));
          return;
        } catch {
          // not an answer of ours
        }
      }
      if (text.length > 64 * 1024) done(undefined);
    });
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
  });
}

/** The pid recorded by a running daemon, if its file exists and parses. */
export function readDaemonPid(paths: DaemonPaths): number | undefined {
  try {
    const pid = Number(readFileSync(paths.pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` is a live process running a conch daemon (`… daemon run`), as `ps` tells (any POSIX host). */
export function isDaemonProcess(pid: number): boolean {
  try {
    const args = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    });
    return / daemon run( |$)/m.test(args.trim());
  } catch {
    // No such process (ps exits 1), or no ps.
    return false;
  }
}

/**
 * What an earlier daemon of this home left, seen while no daemon answers: `crashed` when it died without
 * shutting down (its socket file is still there, or its pid file names a process that is no daemon),
 * `stopped` when it shut down cleanly, undefined when no daemon ran here before (or left no trace).
 */
export function previousDaemon(paths: DaemonPaths): 'crashed' | 'stopped' | undefined {
  const pid = readDaemonPid(paths);
  if (existsSync(paths.socket) || (pid !== undefined && !isDaemonProcess(pid))) return 'crashed';
  if (existsSync(paths.stoppedFile)) return 'stopped';
  return undefined;
}
