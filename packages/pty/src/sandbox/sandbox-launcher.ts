/**
 * Starts a session's processes inside its sandbox (the local driver's part of docs/sandbox.md): what each
 * session's sandbox owns on the host while any of its processes runs — its private /tmp, and for a host
 * list the filtering proxy — and the host pid of the sandboxed program.
 *
 * With bubblewrap (Linux) the program runs as pid 2 of its own PID namespace, under two bubblewrap
 * processes. From the host it is still an ordinary process with a host pid, which is what conch reports
 * and acts on (its foreground group, kill trees, escaped processes by `CONCH_COMMAND_ID`, the orphan
 * reaper's `CONCH_OWNER`); {@link locateProgram} finds it. Nothing conch does relies on a pid the shell
 * reports (`$$` is 2 inside).
 *
 * With Seatbelt (macOS) `sandbox-exec` applies the profile and replaces itself with the program: the
 * terminal's own process is the program (depth 0), and there is no PID namespace. An isolated command
 * starts its own `sandbox-exec` with the session's profile (the same files, temporary directory and
 * proxy).
 */

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SandboxLaunch } from '@conch/core';
import { processFacts } from '@conch/node';
import { findExecutable } from '../find-executable.js';
import { proveSeatbeltProfile, type SandboxTools, type SeatbeltTools, sandboxTools } from './availability.js';
import { bwrapCommandLine, joinCommandLine, sandboxEnvironment } from './bwrap-args.js';
import { type HostProxy, type LoopbackProxy, startHostProxy, startLoopbackProxy } from './host-proxy.js';
import {
  type SeatbeltProfile,
  seatbeltCommandLine,
  seatbeltEnvironment,
  seatbeltProfile,
} from './seatbelt-profile.js';

/** What the sandbox of one session holds on the host while its processes run. */
interface Box {
  tmpDir: string;
  proxy: HostProxy | undefined;
  /** The proxy on 127.0.0.1 (Seatbelt, network is a host list). */
  loopback: LoopbackProxy | undefined;
  /** The session's Seatbelt profile, built and proven once (Seatbelt). */
  seatbelt: { profile: SeatbeltProfile; env: Record<string, string> } | undefined;
  users: number;
  /** Host pid of the session's shell inside the sandbox, once it runs (isolated commands join it). */
  shell: number | undefined;
}

/**
 * How many processes lie between the terminal's own process and a sandboxed program: 0 with Seatbelt
 * (`sandbox-exec` becomes the program), 1 for a process that joined a bubblewrap sandbox (nsenter), 2 in
 * a new bubblewrap sandbox (bubblewrap and its init).
 */
export type SandboxDepth = 0 | 1 | 2;

/** How to start one sandboxed process, and what to release when it ends. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  /** Environment on top of the program's own. */
  env: Record<string, string>;
  /** Releases the session's sandbox on the host once its last process is gone. Idempotent. */
  release(): void;
  /** How many processes lie between the terminal's own process and the program (see {@link locateProgram}). */
  depth: SandboxDepth;
  /** Records the program's host pid as the session's shell (isolated commands then join its sandbox). */
  isShell(pid: number): void;
}

/** Starts processes in their sessions' sandboxes for a driver whose private files live in `driverDir`. */
export class SandboxLauncher {
  private readonly boxes = new Map<string, Box>();

  constructor(private readonly driverDir: string) {}

  /**
   * Prepares the start of `program args` in `cwd` inside `launch` (throws SANDBOX_UNAVAILABLE). With
   * `join`, a process of a session whose shell runs enters that shell's sandbox instead of a new one.
   */
  async prepare(
    launch: SandboxLaunch,
    program: string,
    args: string[],
    cwd: string,
    join: boolean,
  ): Promise<SandboxedSpawn> {
    const hosts = Array.isArray(launch.rules.network) ? launch.rules.network : undefined;
    const tools = await sandboxTools(hosts !== undefined);
    const box = await this.box(launch, hosts, tools);
    box.users++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--box.users === 0) this.drop(launch.privateDir, box);
    };
    const isShell = (pid: number) => {
      box.shell = pid;
    };
    try {
      if (tools.kind === 'seatbelt') {
        const seatbelt = await this.profileOf(launch, box, tools);
        const argv = seatbeltCommandLine(seatbelt.profile, program, args);
        return { file: tools.sandboxExec, args: argv, env: seatbelt.env, release, depth: 0, isShell };
      }
      const target = join ? box.shell : undefined;
      const nsenter = target === undefined ? undefined : findExecutable('nsenter');
      const setpriv = target === undefined ? undefined : findExecutable('setpriv');
      if (target !== undefined && (await processFacts().alive([target])).length > 0 && nsenter && setpriv) {
        // The working directory as the sandbox sees it (the shell's root), else its root.
        const wd = existsSync(`/proc/${target}/root${cwd}`) ? cwd : '/';
        const joined = joinCommandLine({ nsenter, setpriv, target, cwd: wd, program, args });
        const env = sandboxEnvironment(box.proxy === undefined ? {} : { proxySocket: box.proxy.socketPath });
        return { file: tools.env, args: joined, env, release, depth: 1, isShell };
      }
      const plan = {
        bwrap: tools.bwrap,
        launch,
        tmpDir: box.tmpDir,
        hide: [this.driverDir],
        cwd,
        program,
        args,
        ...(box.proxy === undefined || tools.socat === undefined
          ? {}
          : { proxySocket: box.proxy.socketPath, socat: tools.socat }),
      };
      return {
        file: tools.env,
        args: bwrapCommandLine(plan),
        env: sandboxEnvironment(plan),
        release,
        depth: 2,
        isShell,
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Stops every session's proxy and removes the private /tmp directories. */
  dispose(): void {
    for (const [key, box] of this.boxes) this.drop(key, box);
  }

  /** The session's Seatbelt profile and environment, built and proven on the first process. */
  private async profileOf(
    launch: SandboxLaunch,
    box: Box,
    tools: SeatbeltTools,
  ): Promise<NonNullable<Box['seatbelt']>> {
    if (box.seatbelt) return box.seatbelt;
    const plan = {
      launch,
      tmpDir: box.tmpDir,
      hide: [this.driverDir],
      ...(box.loopback === undefined ? {} : { proxyPort: box.loopback.port }),
    };
    const profile = seatbeltProfile(plan);
    await proveSeatbeltProfile(tools, profile);
    box.seatbelt = { profile, env: seatbeltEnvironment(plan) };
    return box.seatbelt;
  }

  private async box(launch: SandboxLaunch, hosts: string[] | undefined, tools: SandboxTools): Promise<Box> {
    const existing = this.boxes.get(launch.privateDir);
    if (existing) return existing;
    const tmpDir = join(this.driverDir, `${basename(launch.privateDir)}.tmp`);
    mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
    const box: Box = {
      tmpDir,
      proxy: undefined,
      loopback: undefined,
      seatbelt: undefined,
      users: 0,
      shell: undefined,
    };
    this.boxes.set(launch.privateDir, box);
    if (hosts !== undefined) {
      try {
        if (tools.kind === 'seatbelt') box.loopback = await startLoopbackProxy(hosts);
        else box.proxy = await startHostProxy(join(launch.privateDir, 'proxy.sock'), hosts);
      } catch (error) {
        this.drop(launch.privateDir, box);
        throw error;
      }
    }
    return box;
  }

  private drop(key: string, box: Box): void {
    if (this.boxes.get(key) === box) this.boxes.delete(key);
    box.proxy?.close();
    box.loopback?.close();
    rmSync(box.tmpDir, { recursive: true, force: true });
  }
}

/** The children of `pid`, from the host's process facts. */
async function childrenOf(pid: number): Promise<number[]> {
  return (await processFacts().processes()).filter((p) => p.ppid === pid).map((p) => p.pid);
}

/**
 * The host pid of the program a bubblewrap-sandboxed terminal runs: the child of bubblewrap's init (the
 * child of the terminal's own process, `terminalPid`), or for a process that joined a sandbox (`depth` 1),
 * the child of nsenter (the terminal's own process). (With Seatbelt, depth 0, the terminal's own process
 * is the program: there is nothing to look for.) Waits up to `limitMs` for bubblewrap to start it;
 * undefined when `gone()` says the terminal ended first, or the limit passed.
 */
export async function locateProgram(
  terminalPid: number,
  depth: Exclude<SandboxDepth, 0>,
  gone: () => boolean,
  limitMs = 10_000,
): Promise<number | undefined> {
  const deadline = Date.now() + limitMs;
  let wait = 0;
  while (!gone() && Date.now() < deadline) {
    for (const first of await childrenOf(terminalPid)) {
      const program = depth === 1 ? first : (await childrenOf(first))[0];
      if (program !== undefined) return program;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait + 1, 10);
  }
  return undefined;
}
