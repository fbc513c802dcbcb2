/**
 * Where the per-user daemon lives: one private directory (mode 0700) holding its socket (mode 0600), its
 * pid file and its log. `CONCH_HOME` overrides the place (tests use it so they never touch a real user's
 * daemon); otherwise `$XDG_RUNTIME_DIR/conch`, else `~/.conch`.
 */

import { lstatSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
  /** Written by a daemon that shut down cleanly (removed when the next one starts). */
  stoppedFile: string;
}

/** The daemon's directory for this environment (see the module doc). */
export function daemonDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONCH_HOME) return resolve(env.CONCH_HOME);
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
    stoppedFile: join(dir, 'daemon.stopped'),
  };
}

/**
 * Makes sure the daemon directory exists and only this user can use it. A missing directory is created
 * with mode 0700. An existing one is used as it is (its mode is never changed: `CONCH_HOME` may name a
 * directory others rely on) when it is private: a real directory, not a symlink, owned by this user, with
 * no permission for group or others. Anything else is refused with a message saying why and what to do.
 */
export function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') mkdirSync(dir, { recursive: true, mode: 0o700 });
    else if (code !== 'EEXIST') throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory())
    throw new Error(`${dir} is not a directory (conch keeps its daemon's socket there).`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user (uid ${stat.uid}); refusing to use it.`);
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new Error(
      `${dir} is open to other users (mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}); conch keeps its daemon's socket in a directory only you can use. Point CONCH_HOME at a private directory (conch creates a missing one with mode 0700), or make this one private (chmod 700).`,
    );
  }
}
