/**
 * Where the per-user daemon lives: one private directory (mode 0700) holding its socket (mode 0600), its
 * pid file and its log. `CONCH_HOME` overrides the place (tests use it so they never touch a real user's
 * daemon); otherwise `$XDG_RUNTIME_DIR/conch`, else `~/.conch`.
 */

import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The files of one daemon. */
export interface DaemonPaths {
  /** The private directory (mode 0700). */
  dir: string;
  /** The unix socket the daemon listens on (mode 0600). */
  socket: string;
  /** The daemon's pid, written once it listens. */
  pidFile: string;
  /** The daemon's stderr log. */
  logFile: string;
}

/** The daemon's directory for this environment (see the module doc). */
export function daemonDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONCH_HOME) return env.CONCH_HOME;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'conch');
  return join(homedir(), '.conch');
}

/** The daemon's files for this environment. */
export function daemonPaths(env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const dir = daemonDir(env);
  return {
    dir,
    socket: join(dir, 'daemon.sock'),
    pidFile: join(dir, 'daemon.pid'),
    logFile: join(dir, 'daemon.log'),
  };
}

/**
 * Creates the daemon directory with mode 0700 (tightening an existing one we own). Refuses a directory
 * that is a symlink or belongs to another user: the socket inside must be reachable only by this user.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory.`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user (uid ${stat.uid}); refusing to use it.`);
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}
