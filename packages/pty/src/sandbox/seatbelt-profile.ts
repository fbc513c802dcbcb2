/**
 * The Seatbelt profile of a sandboxed process on macOS (docs/sandbox.md "macOS"), run with
 * `sandbox-exec -p PROFILE -DP0=/path … -- program args`: the same resolved rules as bubblewrap's on
 * Linux, in Apple's sandbox profile language (SBPL), in the manner of Codex's and Claude Code's profiles.
 *
 * - Nothing is allowed unless a rule says so (`(deny default)`); programs may run, fork, signal and inspect
 *   processes of their own sandbox, read sysctls, and look up the system services ordinary programs need.
 * - Everything is readable but the hidden paths (`deny_read`, and the driver's directory of every session's
 *   private files); writable are only the `write` paths, the session's private directory and its private
 *   temporary directory, and the terminal's devices.
 * - Where rules overlap the most specific path wins, as on Linux: Seatbelt applies the last rule that
 *   matches, so the path rules are emitted shallow first, and at one path hiding comes last.
 * - A hidden path cannot be moved from under its rule: its ancestors inside a writable path cannot be
 *   renamed or removed, and hard links are refused everywhere (a link would be a second, readable name).
 * - Network `none`: only unix sockets under the writable paths; `all`: everything but the hidden paths'
 *   sockets; a host list: only the host proxy's port on 127.0.0.1 (`proxyPort`).
 *
 * No path is ever written into the profile's text: each is a `-D` parameter, referred to as
 * `(param "P3")`, so a path with `"`, `\` or `)` cannot end a string literal and widen the profile. Paths
 * are canonical (symbolic links resolved: `/tmp` is `/private/tmp` on macOS), because Seatbelt matches the
 * path a file really has; a hidden path is also hidden under the spelling it was given.
 */

import { dirname } from 'node:path';
import { isWithin, normalizePath, type SandboxLaunch } from '@conch/core';
import { canonicalPath } from './canonical-path.js';
import { proxyEnvironment } from './proxy-env.js';

/** What the profile is built from besides the session's rules. */
export interface SeatbeltPlan {
  /** The rules and the session's private directory (usable inside). */
  launch: SandboxLaunch;
  /** The session's private temporary directory (writable; `TMPDIR` points to it). */
  tmpDir: string;
  /** More paths to hide (the driver's directory of every session's private files). */
  hide: readonly string[];
  /** The host proxy's TCP port on 127.0.0.1 (network is a host list). */
  proxyPort?: number;
}

/** A profile and the values of the parameters it refers to. */
export interface SeatbeltProfile {
  /** The SBPL text (no path in it). */
  profile: string;
  /** `-D` parameters: name → canonical path. */
  params: Record<string, string>;
}

/** Mach services ordinary programs look up (user and group names, logging, preferences, notifications). */
const MACH_SERVICES = [
  'com.apple.bsd.dirhelper',
  'com.apple.coreservices.launchservicesd',
  'com.apple.distributed_notifications@Uv3',
  'com.apple.logd',
  'com.apple.lsd.mapdb',
  'com.apple.PowerManagement.control',
  'com.apple.securityd.xpc',
  'com.apple.SecurityServer',
  'com.apple.system.logger',
  'com.apple.system.notification_center',
  'com.apple.system.opendirectoryd.libinfo',
  'com.apple.system.opendirectoryd.membership',
];

/** Mach services that name lookups and TLS need when the network is open. */
const NETWORK_MACH_SERVICES = [
  'com.apple.dnssd.service',
  'com.apple.networkd',
  'com.apple.ocspd',
  'com.apple.SystemConfiguration.configd',
  'com.apple.SystemConfiguration.DNSConfiguration',
  'com.apple.trustd.agent',
];

const BASE = [
  '(version 1)',
  '(deny default)',
  '',
  '; Processes: run, fork, and see or signal only processes of this sandbox.',
  '(allow process-exec)',
  '(allow process-fork)',
  '(allow process-info* (target same-sandbox))',
  '(allow signal (target same-sandbox))',
  '(allow sysctl-read)',
  '(allow user-preference-read)',
  '(allow ipc-posix-shm)',
  '(allow ipc-posix-sem)',
  '(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))',
  '(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))',
  `(allow mach-lookup ${MACH_SERVICES.map((n) => `(global-name "${n}")`).join(' ')})`,
  '',
  '; Devices: the null and random devices, the controlling terminal (/dev/tty), the descriptors a',
  '; process holds (/dev/fd), and new pseudo-terminals. Another terminal of the user is not opened by',
  '; its name; the session terminal the shell inherited takes ioctls (job control, window size).',
  '(allow file-read* file-write* file-ioctl (literal "/dev/null") (literal "/dev/zero")',
  '  (literal "/dev/random") (literal "/dev/urandom") (literal "/dev/dtracehelper")',
  '  (literal "/dev/tty") (literal "/dev/stdin") (literal "/dev/stdout") (literal "/dev/stderr")',
  '  (regex #"^/dev/fd/[0-9]+$") (literal "/dev/ptmx"))',
  '(allow pseudo-tty)',
  '(allow file-read* file-write* (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))',
  '(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
  '',
  '; Files: everything readable; the path rules below narrow and widen it, most specific last.',
  '(allow file-read*)',
];

/** The network part, before the path rules (which add the unix sockets of the writable paths). */
function networkRules(network: SandboxLaunch['rules']['network'], proxyPort: number | undefined): string[] {
  const lines = [
    '',
    `; Network: ${typeof network === 'string' ? network : 'a host list, through the proxy'}.`,
  ];
  if (network === 'all') {
    lines.push(
      '(allow network*)',
      '(allow system-socket)',
      `(allow mach-lookup ${NETWORK_MACH_SERVICES.map((n) => `(global-name "${n}")`).join(' ')})`,
    );
    return lines;
  }
  lines.push('(allow system-socket (socket-domain AF_UNIX))');
  if (Array.isArray(network)) {
    if (proxyPort === undefined || !Number.isInteger(proxyPort) || proxyPort < 1 || proxyPort > 65535) {
      throw new Error(`A host list needs the proxy's port (1-65535), got ${String(proxyPort)}.`);
    }
    lines.push(`(allow network-outbound (remote ip "localhost:${proxyPort}"))`);
  }
  return lines;
}

type PathRule = { path: string; hide: boolean };

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

/** The profile for `plan` (see the module doc). */
export function seatbeltProfile(plan: SeatbeltPlan): SeatbeltProfile {
  const { rules } = plan.launch;
  const params: Record<string, string> = {};
  const names = new Map<string, string>();
  const param = (path: string) => {
    let name = names.get(path);
    if (name === undefined) {
      name = `P${names.size}`;
      names.set(path, name);
      params[name] = path;
    }
    return `(param "${name}")`;
  };

  const writable = [...rules.write, plan.launch.privateDir, plan.tmpDir].map(canonicalPath);
  const hidden = [...rules.deny_read, ...plan.hide].flatMap((p) => [normalizePath(p), canonicalPath(p)]);
  const pathRules: PathRule[] = [
    ...[...new Set(writable)].map((path) => ({ path, hide: false })),
    ...[...new Set(hidden)].map((path) => ({ path, hide: true })),
  ];
  // Shallow paths first, so that a deeper rule comes later and wins; at one path, hiding wins.
  pathRules.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.hide) - Number(b.hide));

  const lines = [...BASE, ...networkRules(rules.network, plan.proxyPort)];
  lines.push('', '; Paths: writable, or hidden (unreadable, unwritable, no socket), shallow first.');
  for (const { path, hide } of pathRules) {
    const p = param(path);
    const verb = hide ? 'deny' : 'allow';
    lines.push(
      `(${verb} file-read* file-write* (subpath ${p}))`,
      `(${verb} network-bind network-inbound (local unix-socket (subpath ${p})))`,
      `(${verb} network-outbound (remote unix-socket (subpath ${p})))`,
    );
  }
  // realpath() and path lookups stat every directory on the way, hidden ones included (their contents
  // stay unreadable: no listing, no file).
  lines.push('(allow file-read-metadata (vnode-type DIRECTORY))');

  // A hidden path inside a writable one must not be moved from under its rule by renaming a directory
  // above it (`mv proj/a proj/b; cat proj/b/secret`).
  const hiddenPaths = pathRules.filter((r) => r.hide).map((r) => r.path);
  const pinned = new Set<string>();
  for (const path of hiddenPaths) {
    for (let dir = dirname(path); dir !== '/'; dir = dirname(dir)) {
      if (writable.some((w) => isWithin(dir, w))) pinned.add(dir);
    }
  }
  if (pinned.size > 0) {
    lines.push(
      '',
      '; Directories above a hidden path inside a writable one stay where they are.',
      `(deny file-write-unlink ${[...pinned].map((dir) => `(literal ${param(dir)})`).join(' ')})`,
    );
  }
  return { profile: `${lines.join('\n')}\n`, params };
}

/** The arguments of `sandbox-exec` that run `program args` under `profile`. */
export function seatbeltCommandLine(
  profile: SeatbeltProfile,
  program: string,
  args: readonly string[],
): string[] {
  return [
    '-p',
    profile.profile,
    ...Object.entries(profile.params).map(([name, value]) => `-D${name}=${value}`),
    '--',
    program,
    ...args,
  ];
}

/** The environment a program in a Seatbelt sandbox gets on top of its own. */
export function seatbeltEnvironment(
  plan: Pick<SeatbeltPlan, 'tmpDir' | 'proxyPort'>,
): Record<string, string> {
  return {
    TMPDIR: canonicalPath(plan.tmpDir),
    ...(plan.proxyPort === undefined ? {} : proxyEnvironment(`http://127.0.0.1:${plan.proxyPort}`)),
  };
}
