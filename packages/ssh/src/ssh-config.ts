/**
 * Resolution of a host alias through an OpenSSH client config (`~/.ssh/config`), with the `ssh-config`
 * parser: HostName, User, Port, IdentityFile, ProxyJump, UserKnownHostsFile, HashKnownHosts and
 * HostKeyAlias are honoured; `Include` is expanded; `%h %p %r %u %d %n %i %l %%` tokens and `~` are expanded in paths.
 * `Match exec` is never evaluated (conch does not run commands from a config file).
 */

import { readdirSync, readFileSync } from 'node:fs';
import { homedir, hostname as localHostname, userInfo } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { expandHomePath } from '@conch/node';
import SSHConfig from 'ssh-config';

/** One hop of a ProxyJump chain, as written (`[user@]host[:port]`). */
export interface JumpSpec {
  host: string;
  port?: number;
  username?: string;
}

/** What the config says about one host. Absent fields were not set. */
export interface ResolvedHostConfig {
  /** The name as given (possibly an alias). */
  alias: string;
  /** HostName, with `%h` expanded; the alias itself when not set. */
  hostName: string;
  port?: number;
  user?: string;
  /** IdentityFile paths, `~` and tokens expanded (the caller adds the port/user for %p/%r). */
  identityFiles: string[];
  /** ProxyJump hops, outermost first; empty for none. */
  proxyJump: JumpSpec[];
  /** UserKnownHostsFile paths, expanded. */
  knownHostsFiles: string[];
  /** HashKnownHosts yes. */
  hashKnownHosts: boolean;
  /** HostKeyAlias: the name known_hosts uses instead of HostName. */
  hostKeyAlias?: string;
}

/** The default config path: `~/.ssh/config`. */
export function defaultConfigPath(): string {
  return join(homedir(), '.ssh', 'config');
}

/** Parses `[user@]host[:port]` (also `[v6addr]:port`) as ProxyJump and `conch ssh` accept. */
export function parseHostSpec(spec: string): JumpSpec {
  let rest = spec.trim().replace(/^ssh:\/\//, '');
  let username: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    username = rest.slice(0, at);
    rest = rest.slice(at + 1);
  }
  let host = rest;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracket) {
    host = bracket[1] ?? rest;
    if (bracket[2]) port = Number(bracket[2]);
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon > 0 && rest.indexOf(':') === colon && /^\d+$/.test(rest.slice(colon + 1))) {
      host = rest.slice(0, colon);
      port = Number(rest.slice(colon + 1));
    }
  }
  return { host, ...(port === undefined ? {} : { port }), ...(username ? { username } : {}) };
}

/** Reads a config file and inlines its `Include` directives (relative paths are under ~/.ssh). */
function readWithIncludes(path: string, depth = 0): string {
  if (depth > 16) return '';
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  return text
    .split(/\r?\n/)
    .map((line) => {
      const m = /^\s*include\s*[=\s]\s*(.+?)\s*$/i.exec(line);
      if (!m) return line;
      const parts = (m[1] ?? '').split(/\s+/).filter(Boolean);
      return parts
        .flatMap((p) => expandIncludeGlob(expandHomePath(p.replace(/^"|"$/g, ''))))
        .map((file) => readWithIncludes(file, depth + 1))
        .join('\n');
    })
    .join('\n');
}

/** Expands `*` and `?` in the last path component of an Include pattern. */
function expandIncludeGlob(pattern: string): string[] {
  const full = isAbsolute(pattern) ? pattern : join(homedir(), '.ssh', pattern);
  const base = basename(full);
  if (!/[*?]/.test(base)) return [full];
  const dir = dirname(full);
  const re = new RegExp(
    `^${base
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  try {
    return readdirSync(dir)
      .filter((f) => re.test(f))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Expands OpenSSH `%` tokens. */
export function expandTokens(
  value: string,
  tokens: { host: string; port: number; user: string; alias: string },
): string {
  const local = safeUserInfo();
  return value.replace(/%([%hprudnil])/g, (_, t: string) => {
    switch (t) {
      case '%':
        return '%';
      case 'h':
        return tokens.host;
      case 'p':
        return String(tokens.port);
      case 'r':
        return tokens.user;
      case 'u':
        return local.username;
      case 'd':
        return homedir();
      case 'n':
        return tokens.alias;
      case 'i':
        return String(local.uid);
      case 'l':
        return localHostname();
      default:
        return _;
    }
  });
}

function safeUserInfo(): { username: string; uid: number } {
  try {
    const info = userInfo();
    return { username: info.username, uid: info.uid };
  } catch {
    return { username: process.env.USER ?? 'unknown', uid: process.getuid?.() ?? -1 };
  }
}

/** The local user's name (the default remote user when neither the call nor the config names one). */
export function localUsername(): string {
  return safeUserInfo().username;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function all(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Resolves `alias` through the config at `configPath` (missing file = no settings). `%p` and `%r`
 * in paths use the config's Port/User (or 22 and the local user), as OpenSSH does before the
 * command line overrides are known; pass `port`/`user` to use the final values.
 */
export function resolveHostConfig(
  alias: string,
  configPath: string | null,
  final: { port?: number; user?: string } = {},
): ResolvedHostConfig {
  let computed: Record<string, string | string[]> = {};
  if (configPath !== null) {
    const text = readWithIncludes(configPath);
    if (text.trim() !== '') {
      computed = SSHConfig.parse(text).compute(alias, { ignoreCase: true, matchExec: false });
    }
  }
  const portText = first(computed.port);
  const port = portText !== undefined && /^\d+$/.test(portText) ? Number(portText) : undefined;
  const user = first(computed.user);
  const rawHostName = first(computed.hostname);
  const hostName = rawHostName ? rawHostName.replace(/%h/g, alias).replace(/%%/g, '%') : alias;
  const tokens = {
    host: hostName,
    port: final.port ?? port ?? 22,
    user: final.user ?? user ?? localUsername(),
    alias,
  };
  const expandPath = (p: string) => expandHomePath(expandTokens(p.replace(/^"|"$/g, ''), tokens));
  const jumpText = first(computed.proxyjump);
  const proxyJump =
    jumpText === undefined || jumpText.toLowerCase() === 'none'
      ? []
      : jumpText
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map(parseHostSpec);
  return {
    alias,
    hostName,
    ...(port === undefined ? {} : { port }),
    ...(user === undefined ? {} : { user }),
    identityFiles: all(computed.identityfile)
      .filter((p) => p.toLowerCase() !== 'none')
      .map(expandPath),
    proxyJump,
    knownHostsFiles: all(computed.userknownhostsfile)
      .flatMap((v) => v.split(/\s+/))
      .filter((p) => p && p.toLowerCase() !== 'none')
      .map(expandPath),
    hashKnownHosts: (first(computed.hashknownhosts) ?? '').toLowerCase() === 'yes',
    ...(first(computed.hostkeyalias) ? { hostKeyAlias: first(computed.hostkeyalias) } : {}),
  };
}
