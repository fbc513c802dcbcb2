/**
 * The local driver: session shells and isolated commands on real pseudo-terminals (node-pty), a private
 * 0700 directory for init scripts and long commands, and an owner tag in every process's environment so
 * that a later server can reap what a killed one left behind.
 */

import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  ConchError,
  type Driver,
  ErrorCode,
  type OpenShellOptions,
  type SpawnOptions,
  type TerminalProcess,
} from '@conch/core';
import { currentInstance, markInstanceDir, type ServerInstance } from '@conch/node';
import nodePty from '@lydell/node-pty';
import { PtyProcess } from './pty-process.js';

/** Name of the environment variable that tags every process with its owning server. */
export const OWNER_ENV = 'CONCH_OWNER';

/** Options of {@link createLocalDriver}. */
export interface LocalDriverOptions {
  /** Tag put into every process's environment as CONCH_OWNER (default: `conch-<pid>-<start time>-<random>`). */
  ownerTag?: string;
  /** Parent of the private directory (default: the OS temp dir). */
  tmpDir?: string;
}

/** The local driver with its extras. */
export interface LocalDriver extends Driver {
  /** The owner tag of this server instance. */
  readonly ownerTag: string;
  /** The private 0700 directory. */
  readonly privateDir: string;
  /** Live terminals (for leak checks). */
  liveCount(): number;
}

/**
 * The owner tag for this server instance: `conch-<pid>-<start time>-<random>` (the start time tells this
 * instance from a later process with the same pid; see {@link ownerOfTag}).
 */
export function defaultOwnerTag(): string {
  const me = currentInstance();
  return `conch-${me.pid}-${me.startTime}-${Math.random().toString(36).slice(2, 10)}`;
}

/** The server instance an owner tag names, or undefined for a tag in another format. */
export function ownerOfTag(tag: string): ServerInstance | undefined {
  const match = /^conch-(\d+)-(\d+)-[a-z0-9]+$/.exec(tag);
  return match ? { pid: Number(match[1]), startTime: Number(match[2]) } : undefined;
}

/** Finds `setpriv` (util-linux) to give shells a parent-death signal, if present. */
function findSetpriv(): string | undefined {
  for (const p of ['/usr/bin/setpriv', '/bin/setpriv']) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Creates the local driver (see the module doc). */
export function createLocalDriver(options: LocalDriverOptions = {}): LocalDriver {
  const ownerTag = options.ownerTag ?? defaultOwnerTag();
  const privateDir = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'conch-'));
  // A later start removes this directory (env snapshots, scripts) once this server is gone.
  markInstanceDir(privateDir);
  const setpriv = findSetpriv();
  const live = new Set<PtyProcess>();

  const start = (
    file: string,
    args: string[],
    cwd: string | undefined,
    env: Record<string, string>,
    cols: number,
    rows: number,
  ): TerminalProcess => {
    const workdir = cwd === undefined ? process.cwd() : resolve(cwd);
    if (!existsSync(workdir)) {
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Invalid cwd: ${JSON.stringify(cwd)} does not exist.`,
        {
          hint: 'Give an existing directory.',
        },
      );
    }
    const fullEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) fullEnv[k] = v;
    Object.assign(fullEnv, env, { [OWNER_ENV]: ownerTag });
    // Let the program die with the server: a parent-death signal where util-linux offers one.
    const [program, argv] = setpriv
      ? [setpriv, ['--pdeathsig', 'SIGKILL', '--', file, ...args]]
      : [file, args];
    let pty: nodePty.IPty;
    try {
      pty = nodePty.spawn(program, argv, {
        name: env.TERM ?? 'xterm-256color',
        cols,
        rows,
        cwd: workdir,
        env: fullEnv,
        encoding: null as unknown as string,
      });
    } catch (error) {
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Could not start ${JSON.stringify(file)}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const proc = new PtyProcess(pty, ownerTag, () => live.delete(proc));
    live.add(proc);
    return proc;
  };

  return {
    specificationVersion: 1,
    kind: 'local',
    ownerTag,
    privateDir,
    liveCount: () => live.size,
    async openShell(o: OpenShellOptions) {
      try {
        accessSync(o.shell.includes('/') ? o.shell : `/bin/${o.shell}`, constants.X_OK);
      } catch {
        if (!o.shell.includes('/')) {
          // A bare name: let node-pty search PATH.
        } else {
          throw new ConchError(
            ErrorCode.INVALID_ARGUMENT,
            `Invalid shell: ${JSON.stringify(o.shell)} is not an executable.`,
            {
              hint: 'Give a path or name of an installed shell, e.g. /bin/bash, zsh, sh.',
            },
          );
        }
      }
      return start(o.shell, o.args, o.cwd, o.env, o.cols, o.rows);
    },
    async spawn(o: SpawnOptions) {
      return start(o.file, o.args, o.cwd, o.env, o.cols, o.rows);
    },
    async writePrivateFile(name: string, content: string) {
      if (name.includes('..') || name.startsWith('/')) throw new Error(`bad private file name ${name}`);
      const path = join(privateDir, name);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, content, { mode: 0o600 });
      return path;
    },
    async removePrivateFile(path: string) {
      if (!path.startsWith(`${privateDir}/`)) return;
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    },
    async findProgram(name: string) {
      return findExecutable(name);
    },
    async defaultShell() {
      let shell: string | undefined;
      try {
        shell = userInfo().shell ?? undefined;
      } catch {
        shell = undefined;
      }
      shell = shell || process.env.SHELL;
      if (shell && /(bash|zsh|dash|\/sh)$/.test(shell) && existsSync(shell)) return shell;
      return '/bin/bash';
    },
    async dispose() {
      for (const proc of [...live]) proc.dispose();
      rmSync(privateDir, { recursive: true, force: true });
    },
  };
}

/** The path of an executable regular file: `name` itself when it has a slash, else looked up in PATH. */
function findExecutable(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : (process.env.PATH ?? '/usr/bin:/bin')
        .split(':')
        .filter((dir) => dir.startsWith('/'))
        .map((dir) => join(dir, name));
  for (const path of candidates) {
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}
