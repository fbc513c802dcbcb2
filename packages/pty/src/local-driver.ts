/**
 * The local driver: session shells and isolated commands on real pseudo-terminals (node-pty), a private
 * 0700 directory for init scripts and long commands, and an owner tag in every process's environment so
 * that a later server can reap what a killed one left behind.
 */

import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
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
  type SandboxLaunch,
  type SpawnOptions,
  type TerminalProcess,
} from '@conch/core';
import { OWNER_MARKER } from '@conch/core/host';
import {
  currentInstance,
  formatStartTime,
  markInstanceDir,
  parseStartTimeField,
  processFacts,
  type ServerInstance,
} from '@conch/node';
import nodePty from '@lydell/node-pty';
import { findExecutable } from './find-executable.js';
import { PtyProcess } from './pty-process.js';
import { locateProgram, type SandboxDepth, SandboxLauncher } from './sandbox/sandbox-launcher.js';

/** Name of the environment variable that tags every process with its owning server (`CONCH_OWNER`). */
export const OWNER_ENV = OWNER_MARKER;

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
 * The owner tag for this server instance: `conch-<pid>-s<start time>-<random>` (the start time, in seconds
 * since the epoch, tells this instance from a later process with the same pid; see {@link ownerOfTag}).
 */
export function defaultOwnerTag(): string {
  const me = currentInstance();
  return `conch-${me.pid}-${formatStartTime(me.startTime)}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * The server instance an owner tag names, or undefined for a tag that is not conch's. Tags of older servers
 * (`conch-<pid>-<clock ticks>-<random>`, `conch-<pid>-<random>`) name their pid without a start time.
 */
export function ownerOfTag(tag: string): ServerInstance | undefined {
  const match = /^conch-(\d+)-(?:([a-z0-9]+)-)?[a-z0-9]+$/.exec(tag);
  if (!match) return undefined;
  return {
    pid: Number(match[1]),
    startTime: match[2] === undefined ? undefined : parseStartTimeField(match[2]),
  };
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

  const launcher = new SandboxLauncher(privateDir);

  const start = async (
    file: string,
    args: string[],
    cwd: string | undefined,
    env: Record<string, string>,
    cols: number,
    rows: number,
    sandbox: SandboxLaunch | undefined,
    shell: boolean,
  ): Promise<TerminalProcess> => {
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
    // Inside a bubblewrap sandbox, bubblewrap dies with the server (and its PID namespace with it);
    // elsewhere (Seatbelt included) a parent-death signal where util-linux offers one (never on macOS).
    const boxed =
      sandbox === undefined ? undefined : await launcher.prepare(sandbox, file, args, workdir, !shell);
    if (boxed) Object.assign(fullEnv, boxed.env);
    const [program, argv] = boxed
      ? [boxed.file, boxed.args]
      : setpriv
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
      boxed?.release();
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Could not start ${JSON.stringify(file)}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const proc = new PtyProcess(pty, ownerTag, () => {
      live.delete(proc);
      boxed?.release();
    });
    live.add(proc);
    if (boxed) {
      const program = await findSandboxedProgram(proc, pty, file, boxed.depth);
      if (shell) boxed.isShell(program);
    }
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
      return start(o.shell, o.args, o.cwd, o.env, o.cols, o.rows, o.sandbox, true);
    },
    async spawn(o: SpawnOptions) {
      return start(o.file, o.args, o.cwd, o.env, o.cols, o.rows, o.sandbox, false);
    },
    async writePrivateFile(name: string, content: string) {
      if (name.includes('..') || name.startsWith('/')) throw new Error(`bad private file name ${name}`);
      const path = join(privateDir, name);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Never through a symbolic link: a sandboxed session can write its own private directory, and must
      // not make conch write elsewhere for it.
      const fd = openSync(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeFileSync(fd, content);
      } finally {
        closeSync(fd);
      }
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
      launcher.dispose();
      rmSync(privateDir, { recursive: true, force: true });
    },
  };
}

/**
 * Names the host pid of a sandboxed program on its terminal process (see `sandbox/sandbox-launcher.ts`).
 * When bubblewrap ends before the program starts, the sandbox could not be set up: SANDBOX_UNAVAILABLE
 * with what bubblewrap said. With Seatbelt (depth 0) the terminal's own process is the program.
 */
async function findSandboxedProgram(
  proc: PtyProcess,
  pty: nodePty.IPty,
  file: string,
  depth: SandboxDepth,
): Promise<number> {
  if (depth === 0) return pty.pid;
  let said = '';
  let ended = false;
  const data = pty.onData((chunk) => {
    if (said.length < 4000) said += Buffer.from(chunk as unknown as Uint8Array).toString('utf8');
  });
  const exit = pty.onExit(() => {
    ended = true;
  });
  const terminalPid = pty.pid;
  const program = await locateProgram(terminalPid, depth, () => ended);
  data.dispose();
  exit.dispose();
  if (program === undefined && ended && !/^(bwrap|nsenter|setpriv|env): /m.test(said)) {
    // The program ran and ended before it could be seen: nothing failed.
    return terminalPid;
  }
  if (program === undefined) {
    proc.dispose();
    throw new ConchError(
      ErrorCode.SANDBOX_UNAVAILABLE,
      `Could not start ${JSON.stringify(file)} in its sandbox: ${said.trim() || 'bubblewrap ended without starting it'}.`,
      {
        hint: 'Check that every path of the sandbox exists and that bubblewrap works on this host (docs/sandbox.md).',
      },
    );
  }
  const parent = (await processFacts().process(program))?.ppid;
  proc.setProgramPid(program, parent === undefined || depth === 1 ? [terminalPid] : [terminalPid, parent]);
  return program;
}
