/**
 * The rules of a sandboxed session (docs/sandbox.md), defined once: their shape, their defaults, how a
 * request becomes rules, and when one set of rules is narrower than another. Every face (the MCP
 * `create_local {sandbox}`, the server's `--sandbox*` flags, the config file's `sandbox` section, the CLI)
 * only translates into a {@link SandboxRequest}; the driver only enforces resolved {@link SandboxRules}.
 *
 * Pure: paths are POSIX strings; what the host knows (home, runtime directory, conch's own state) comes in
 * as {@link SandboxHostFacts}.
 */

import { ConchError, ErrorCode } from '../errors.js';

/** What the network of a sandbox reaches: nothing, everything the host reaches, or these hosts only. */
export type SandboxNetwork = 'none' | 'all' | string[];

/** The resolved rules of one sandbox: absolute, normalised paths. */
export interface SandboxRules {
  /** Where processes may write (besides the sandbox's private /tmp, which `TMPDIR` points to). */
  write: string[];
  /** What processes cannot read at all (directories look empty, files empty). */
  deny_read: string[];
  /** `none` (the default), `all`, or host names (`example.com`, `*.example.com`, `127.0.0.1`) only. */
  network: SandboxNetwork;
}

/** What a caller asks for: `true` (the defaults), `false` (no sandbox), or some rules (the rest default). */
export type SandboxRequest =
  | boolean
  | { write?: string[] | undefined; deny_read?: string[] | undefined; network?: SandboxNetwork | undefined };

/** The valid words of `network` besides a host list. */
export const SANDBOX_NETWORK_WORDS = ['none', 'all'] as const;

/**
 * The user's secret stores, relative to the home directory: unreadable in every sandbox (whatever
 * `deny_read` adds). docs/sandbox.md lists them.
 */
export const SANDBOX_SECRET_STORES: readonly string[] = [
  '.ssh',
  '.aws',
  '.azure',
  '.gnupg',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.netrc',
  '.git-credentials',
  '.docker/config.json',
  '.kube',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  '.terraform.d/credentials.tfrc.json',
  '.conch',
];

/**
 * Sockets of services that act for the user outside any sandbox (the system bus, container engines):
 * hidden, because a process that can talk to one can have it run anything.
 */
export const SANDBOX_SERVICE_SOCKETS: readonly string[] = [
  '/run/dbus',
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/podman',
  '/run/containerd',
  '/run/user',
];

/** Most paths in `write` or `deny_read`, and most hosts in `network`. */
export const SANDBOX_LIST_MAX = 100;

/** What the host knows that the defaults depend on. */
export interface SandboxHostFacts {
  /** The user's home directory (absolute). */
  home: string;
  /** The directory relative paths and the default `write` are resolved against: the session's cwd. */
  cwd: string;
  /**
   * More paths no sandbox may read: conch's own state (its spill files, the daemon's home), the user's
   * runtime directory ($XDG_RUNTIME_DIR: the session bus, agents' sockets), the ssh-agent socket.
   */
  alwaysDenied?: readonly string[];
}

/** Normalises an absolute POSIX path: no `.`, `..`, repeated or trailing slashes. */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** True when `path` is `dir` or lies below it (both absolute and normalised). */
export function isWithin(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

/** A path as a user wrote it: `~` is the home directory, a relative path is relative to `base`. */
function absolute(path: string, facts: SandboxHostFacts, base: string): string {
  if (path === '~') return normalizePath(facts.home);
  if (path.startsWith('~/')) return normalizePath(`${facts.home}/${path.slice(2)}`);
  return normalizePath(path.startsWith('/') ? path : `${base}/${path}`);
}

/** Without repeats, and without a path that another one of the list contains. */
function outermost(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const p of unique) if (!kept.some((k) => isWithin(p, k))) kept.push(p);
  return kept;
}

const HOST = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

function invalid(what: string, value: unknown, valid: string): ConchError {
  return new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid sandbox ${what}: ${JSON.stringify(value)}.`, {
    hint: `sandbox is true, false, or {write?: [paths], deny_read?: [paths], network?: ${valid}}.`,
  });
}

const NETWORK_CHOICES = '"none" | "all" | ["host", …]';

/** Checks a host list entry: a host name, `*.` + a domain, an IPv4 or an IPv6 address. */
function checkHost(host: unknown): string {
  if (typeof host !== 'string' || host.length === 0 || host.length > 253) {
    throw invalid('network host', host, NETWORK_CHOICES);
  }
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (HOST.test(bare) || (bare.includes(':') && IPV6.test(bare))) return bare.toLowerCase();
  throw invalid('network host', host, NETWORK_CHOICES);
}

/** Checks a `network` value (a word, or a list of hosts) and returns it canonical. */
export function checkSandboxNetwork(network: unknown): SandboxNetwork {
  if (network === 'none' || network === 'all') return network;
  if (Array.isArray(network)) {
    if (network.length > SANDBOX_LIST_MAX)
      throw invalid('network', `${network.length} hosts`, NETWORK_CHOICES);
    const hosts = [...new Set(network.map(checkHost))];
    return hosts.length === 0 ? 'none' : hosts;
  }
  throw invalid('network', network, NETWORK_CHOICES);
}

function checkPaths(what: string, value: unknown): string[] {
  if (!Array.isArray(value) || value.length > SANDBOX_LIST_MAX) throw invalid(what, value, NETWORK_CHOICES);
  for (const p of value) {
    if (typeof p !== 'string' || p.length === 0 || p.length > 4096 || p.includes('\0')) {
      throw invalid(`${what} path`, p, NETWORK_CHOICES);
    }
  }
  return value as string[];
}

/**
 * The rules a request asks for (`true`, or rules whose missing fields default), or undefined for
 * `false`. Defaults: `write` = the session's cwd; `network` = none. `deny_read` always holds the
 * user's secret stores ({@link SANDBOX_SECRET_STORES}), the service sockets and `facts.alwaysDenied`;
 * a request's `deny_read` adds to them. Throws INVALID_ARGUMENT for a malformed request.
 */
export function resolveSandboxRules(
  request: SandboxRequest,
  facts: SandboxHostFacts,
): SandboxRules | undefined {
  if (request === false) return undefined;
  if (request !== true && (typeof request !== 'object' || request === null || Array.isArray(request))) {
    throw invalid('value', request, NETWORK_CHOICES);
  }
  const asked = request === true ? {} : request;
  for (const key of Object.keys(asked)) {
    if (!['write', 'deny_read', 'network'].includes(key)) throw invalid('key', key, NETWORK_CHOICES);
  }
  const cwd = normalizePath(facts.cwd);
  const write = asked.write === undefined ? [cwd] : checkPaths('write', asked.write);
  const denied = asked.deny_read === undefined ? [] : checkPaths('deny_read', asked.deny_read);
  return {
    write: outermost(write.map((p) => absolute(p, facts, cwd))),
    deny_read: outermost([
      ...SANDBOX_SECRET_STORES.map((p) => normalizePath(`${facts.home}/${p}`)),
      ...SANDBOX_SERVICE_SOCKETS,
      ...(facts.alwaysDenied ?? []).map((p) => absolute(p, facts, cwd)),
      ...denied.map((p) => absolute(p, facts, cwd)),
    ]),
    network: asked.network === undefined ? 'none' : checkSandboxNetwork(asked.network),
  };
}

/** `network` in words, e.g. `none`, `all`, `example.com, 127.0.0.1`. */
export function describeSandboxNetwork(network: SandboxNetwork): string {
  return typeof network === 'string' ? network : network.join(', ');
}

/**
 * Why `rules` are wider than `bound` (a sentence), or undefined when they are as narrow or narrower:
 * every writable path lies within a writable path of `bound` and outside its unreadable ones, every
 * unreadable path of `bound` stays unreadable, and the network reaches no more than `bound`'s.
 */
export function sandboxWidening(rules: SandboxRules, bound: SandboxRules): string | undefined {
  for (const path of rules.write) {
    if (!bound.write.some((w) => isWithin(path, w))) {
      return `${path} is outside the required sandbox's writable paths (${bound.write.join(', ') || 'none'}).`;
    }
    const hidden = bound.deny_read.find((d) => isWithin(path, d));
    if (hidden !== undefined) return `${path} lies in ${hidden}, which the required sandbox hides.`;
  }
  for (const path of bound.deny_read) {
    if (!rules.deny_read.some((d) => isWithin(path, d))) {
      return `${path} must stay unreadable (the required sandbox hides it).`;
    }
  }
  const net = rules.network;
  const limit = bound.network;
  if (limit === 'all' || net === 'none') return undefined;
  if (limit === 'none' || net === 'all') {
    return `network ${describeSandboxNetwork(net)} is wider than the required sandbox's (${describeSandboxNetwork(limit)}).`;
  }
  const extra = net.find((host) => !limit.includes(host));
  return extra === undefined
    ? undefined
    : `network host ${extra} is not among the required sandbox's hosts (${describeSandboxNetwork(limit)}).`;
}

/** What the operator set for sandboxes (the server's `--sandbox*` flags and config file). */
export interface SandboxPolicy {
  /** The server's rules: what a session gets when its creator asks for nothing; undefined = none. */
  rules: SandboxRules | undefined;
  /** `--sandbox-required`: every local session is sandboxed, never wider than `rules`. */
  required: boolean;
}

/**
 * The sandbox of a new local session: `request` (undefined = the server's rules, `false` = none, `true`
 * or rules = resolved against `facts`, i.e. the session's cwd), under the operator's `policy`. Under
 * `required`, dropping the sandbox or widening it is refused with POLICY_DENIED, naming why.
 */
export function chooseSandbox(
  request: SandboxRequest | undefined,
  policy: SandboxPolicy,
  facts: SandboxHostFacts,
): SandboxRules | undefined {
  if (request === undefined) return policy.rules;
  const rules = resolveSandboxRules(request, facts);
  if (!policy.required || policy.rules === undefined) return rules;
  const why =
    rules === undefined
      ? 'this server requires every session to be sandboxed (--sandbox-required).'
      : sandboxWidening(rules, policy.rules);
  if (why === undefined) return rules;
  throw new ConchError(ErrorCode.POLICY_DENIED, `Sandbox refused: ${why}`, {
    hint: `Omit sandbox to get the server's (write: ${policy.rules.write.join(', ') || 'none'}; network: ${describeSandboxNetwork(policy.rules.network)}), or ask for a narrower one.`,
  });
}

/** The rules in one short line, for listings: `writes /w, /tmp · network none · 24 paths unreadable`. */
export function describeSandbox(rules: SandboxRules): string {
  return `writes ${[...rules.write, '/tmp'].join(', ')} · network ${describeSandboxNetwork(rules.network)} · ${rules.deny_read.length} paths unreadable`;
}
