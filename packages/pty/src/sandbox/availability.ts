/**
 * Whether this host can run sandboxed sessions, asked of the host itself: bubblewrap on PATH, user
 * namespaces allowed (one real `bwrap … true`), GNU env for the terminal's signals, and socat where a host
 * list needs the proxy relay. A failure is `SANDBOX_UNAVAILABLE` naming what to install or enable; a
 * success is remembered for the binaries that gave it.
 */

import { spawnSync } from 'node:child_process';
import { ConchError, ErrorCode } from '@conch/core';
import { findExecutable } from '../find-executable.js';
import { restoredSignals, sandboxBase } from './bwrap-args.js';

/** The programs a sandboxed process is started with. */
export interface SandboxTools {
  bwrap: string;
  env: string;
  /** Present when asked for (a host list) and found. */
  socat?: string;
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
 * The tools a sandboxed process needs, checked (see the module doc); throws `SANDBOX_UNAVAILABLE` when
 * the host cannot sandbox. `needsProxy`: the network is a host list (socat relays the proxy).
 */
export function sandboxTools(needsProxy: boolean): SandboxTools {
  if (process.platform !== 'linux') {
    throw unavailable(
      `Sandboxed sessions are not available on ${process.platform}: conch sandboxes with bubblewrap, on Linux.`,
      'Create the session without a sandbox, or run conch on Linux with bubblewrap installed.',
    );
  }
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
  const tools: SandboxTools = { bwrap, env };
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
  const probe = spawnSync(env, [...sandboxBase(bwrap, true), '--', ...restoredSignals('true', [])], {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (probe.status !== 0) {
    const said = `${probe.stderr ?? ''}${probe.error ? String(probe.error) : ''}`.trim();
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
