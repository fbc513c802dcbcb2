/**
 * Whether this host can run sandboxed sessions, asked of the host itself, and the one place where the
 * platform picks its sandbox ({@link sandboxPlatform}): on Linux bubblewrap on PATH, user namespaces
 * allowed (one real `bwrap … true`), GNU env for the terminal's signals, and socat where a host list needs
 * the proxy relay; on macOS `/usr/bin/sandbox-exec` and one real run of it. A failure is
 * `SANDBOX_UNAVAILABLE` naming what to install or enable; a success is remembered for the binaries that
 * gave it.
 */

import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { ConchError, ErrorCode } from '@conch/core';
import { findExecutable } from '../find-executable.js';
import { restoredSignals, sandboxBase } from './bwrap-args.js';
import { type SeatbeltProfile, seatbeltCommandLine } from './seatbelt-profile.js';

/** The OS sandboxes conch drives: bubblewrap (Linux) and Seatbelt's `sandbox-exec` (macOS). */
export type SandboxKind = 'bubblewrap' | 'seatbelt';

/** The sandbox of `platform`, or undefined where conch has none. The only place the platform is asked. */
export function sandboxPlatform(platform: NodeJS.Platform = process.platform): SandboxKind | undefined {
  if (platform === 'linux') return 'bubblewrap';
  if (platform === 'darwin') return 'seatbelt';
  return undefined;
}

/** The programs a process is started with in a bubblewrap sandbox. */
export interface BubblewrapTools {
  kind: 'bubblewrap';
  bwrap: string;
  env: string;
  /** Present when asked for (a host list) and found. */
  socat?: string;
}

/** The program a process is started with in a Seatbelt sandbox. */
export interface SeatbeltTools {
  kind: 'seatbelt';
  sandboxExec: string;
}

/** The programs a sandboxed process is started with, by the platform's sandbox. */
export type SandboxTools = BubblewrapTools | SeatbeltTools;

/** Why the host cannot sandbox, in the words of a `SANDBOX_UNAVAILABLE` error. */
export interface SandboxProblem {
  message: string;
  hint: string;
}

/** Where macOS keeps `sandbox-exec`. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** The profile of the availability probe on macOS: it allows everything, so only Seatbelt itself can fail. */
export const SEATBELT_PROBE_PROFILE = '(version 1)(allow default)';

/** How a probe run ended: its exit status (null when it did not run or was killed) and what it said. */
export interface ProbeOutcome {
  status: number | null;
  said: string;
}

/** The problem of a platform conch has no sandbox for. */
export function unsupportedPlatform(platform: string): SandboxProblem {
  return {
    message: `Sandboxed sessions are not available on ${platform}: conch sandboxes with bubblewrap on Linux and with sandbox-exec (Seatbelt) on macOS.`,
    hint: 'Create the session without a sandbox, or run conch on Linux with bubblewrap installed or on macOS.',
  };
}

/**
 * What stops Seatbelt on this Mac, from the facts: `installed` (an executable {@link SANDBOX_EXEC}) and
 * the outcome of `sandbox-exec -p '(version 1)(allow default)' /usr/bin/true`; undefined when it works.
 */
export function seatbeltProblem(
  installed: boolean,
  probe: ProbeOutcome | undefined,
): SandboxProblem | undefined {
  if (!installed) {
    return {
      message: `Cannot sandbox: ${SANDBOX_EXEC} is missing or not executable (macOS ships it; conch sandboxes with it).`,
      hint: 'Restore /usr/bin/sandbox-exec (it is part of macOS), or create the session without a sandbox.',
    };
  }
  if (probe === undefined || probe.status === 0) return undefined;
  const said = probe.said.trim() || `exit ${probe.status ?? 'by a signal'}`;
  if (/sandbox_apply|operation not permitted/i.test(said)) {
    return {
      message: `Cannot sandbox: sandbox-exec could not apply a profile (${said}).`,
      hint: "conch itself runs inside a sandbox (an app sandbox, or another tool's sandbox-exec), and Seatbelt cannot nest: run conch outside it, or create the session without a sandbox.",
    };
  }
  return {
    message: `Cannot sandbox: sandbox-exec failed (${said}).`,
    hint: 'Check that `/usr/bin/sandbox-exec -p "(version 1)(allow default)" /usr/bin/true` works on this Mac, or create the session without a sandbox.',
  };
}

const INSTALL_BWRAP =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), or create the session without a sandbox.';

const ENABLE_USERNS =
  'Enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), user.max_user_namespaces > 0, and on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; inside a container, run it with user namespaces allowed.';

function unavailable(message: string, hint: string): ConchError {
  return new ConchError(ErrorCode.SANDBOX_UNAVAILABLE, message, { hint });
}

const proven = new Set<string>();

/**
 * The tools a sandboxed process needs on this platform, checked (see the module doc); rejects with
 * `SANDBOX_UNAVAILABLE` when the host cannot sandbox. `needsProxy`: the network is a host list (on
 * Linux, socat relays the proxy).
 */
export async function sandboxTools(needsProxy: boolean): Promise<SandboxTools> {
  const kind = sandboxPlatform();
  if (kind === 'bubblewrap') return bubblewrapTools(needsProxy);
  if (kind === 'seatbelt') return seatbeltTools();
  const problem = unsupportedPlatform(process.platform);
  throw unavailable(problem.message, problem.hint);
}

/**
 * What a run of a probe said and how it ended. Asynchronous: a server goes on serving its other sessions
 * while a probe runs (at most {@link PROBE_TIMEOUT_MS}).
 */
function runProbe(file: string, args: readonly string[]): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      const status = error === null ? 0 : typeof code === 'number' ? code : null;
      // A failure to start or a timeout says so; an exit status alone is in `status`.
      const failure = error !== null && status === null ? String(error) : '';
      resolve({ status, said: `${stderr ?? ''}${failure}`.trim() });
    });
  });
}

/** How long a probe may run (ms). */
const PROBE_TIMEOUT_MS = 10_000;

async function seatbeltTools(): Promise<SeatbeltTools> {
  let installed = true;
  try {
    accessSync(SANDBOX_EXEC, constants.X_OK);
  } catch {
    installed = false;
  }
  const tools: SeatbeltTools = { kind: 'seatbelt', sandboxExec: SANDBOX_EXEC };
  if (installed && proven.has(SANDBOX_EXEC)) return tools;
  const probe = installed
    ? await runProbe(SANDBOX_EXEC, ['-p', SEATBELT_PROBE_PROFILE, '/usr/bin/true'])
    : undefined;
  const problem = seatbeltProblem(installed, probe);
  if (problem) throw unavailable(problem.message, problem.hint);
  proven.add(SANDBOX_EXEC);
  return tools;
}

/**
 * Checks that Seatbelt accepts a session's profile, once per session (it runs `/usr/bin/true` under it):
 * `sandbox-exec` replaces itself with the program, so a profile it refuses would otherwise show only as
 * a shell that ended at once. Throws `SANDBOX_UNAVAILABLE` with what sandbox-exec said.
 */
export async function proveSeatbeltProfile(tools: SeatbeltTools, profile: SeatbeltProfile): Promise<void> {
  const probe = await runProbe(tools.sandboxExec, seatbeltCommandLine(profile, '/usr/bin/true', []));
  if (probe.status === 0) return;
  throw unavailable(
    `Cannot sandbox: sandbox-exec refused the session's profile (${probe.said || `exit ${probe.status}`}).`,
    'Check that every path of the sandbox exists and is spelled as macOS knows it; docs/sandbox.md lists what the profile needs.',
  );
}

async function bubblewrapTools(needsProxy: boolean): Promise<BubblewrapTools> {
  const bwrap = findExecutable('bwrap');
  if (bwrap === undefined) {
    throw unavailable('Cannot sandbox: bubblewrap (bwrap) is not installed or not on PATH.', INSTALL_BWRAP);
  }
  const env = findExecutable('env');
  if (env === undefined) {
    throw unavailable(
      'Cannot sandbox: env (GNU coreutils) is not on PATH.',
      'Install coreutils 8.31 or later.',
    );
  }
  const tools: BubblewrapTools = { kind: 'bubblewrap', bwrap, env };
  if (needsProxy) {
    const socat = findExecutable('socat');
    if (socat === undefined) {
      throw unavailable(
        'Cannot sandbox with a host list: socat is not installed or not on PATH (it relays the proxy into the sandbox).',
        'Install socat (Debian/Ubuntu: apt-get install socat), or use network "none" or "all".',
      );
    }
    tools.socat = socat;
  }
  const key = `${bwrap}\0${env}`;
  if (proven.has(key)) return tools;
  const probe = await runProbe(env, [...sandboxBase(bwrap, true), '--', ...restoredSignals('true', [])]);
  if (probe.status !== 0) {
    const said = probe.said;
    const namespaces = /namespace|uid map|setting up|permission denied|operation not permitted/i.test(said);
    if (/unrecognized option|invalid option|unknown option/i.test(said)) {
      throw unavailable(
        `Cannot sandbox: ${bwrap} or ${env} is too old (${said}).`,
        'conch needs bubblewrap 0.8 or later and GNU coreutils 8.31 or later.',
      );
    }
    throw unavailable(
      `Cannot sandbox: bubblewrap could not create its namespaces (${said || `exit ${probe.status}`}).`,
      namespaces ? ENABLE_USERNS : INSTALL_BWRAP,
    );
  }
  proven.add(key);
  return tools;
}
