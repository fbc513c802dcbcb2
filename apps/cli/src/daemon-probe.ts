/**
 * What a client asks about the per-user daemon without loading it: whether its socket answers, and the
 * pid it recorded (the daemon itself, with the whole server, is in daemon.ts).
 */

import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
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

/** The pid recorded by a running daemon, if its file exists and parses. */
export function readDaemonPid(paths: DaemonPaths): number | undefined {
  try {
    const pid = Number(readFileSync(paths.pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
