/**
 * OpenSSH `known_hosts` files: parsing (plain and hashed `|1|salt|hash` host patterns, `[host]:port`
 * forms, wildcards and negations, `@revoked` markers), lookup of one host's keys, SHA256 fingerprints
 * as `ssh-keygen -l` prints them, and appending entries for newly accepted keys.
 */

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** One key line of a known_hosts file. */
export interface KnownHostEntry {
  /** The host patterns field as written (comma-separated, possibly hashed). */
  hosts: string;
  /** Key type, e.g. `ssh-ed25519`. */
  keyType: string;
  /** The key blob (decoded base64). */
  key: Buffer;
  /** `@revoked` or `@cert-authority`, when present. */
  marker?: 'revoked' | 'cert-authority';
  /** File and 1-based line, for messages. */
  source: string;
}

/** What a known_hosts lookup found for one host and one presented key. */
export type HostKeyStatus =
  | { status: 'known' }
  | { status: 'unknown' }
  | { status: 'revoked' }
  | { status: 'changed'; knownFingerprints: string[]; knownTypes: string[]; sources: string[] };

/** The SHA256 fingerprint of a key blob, as `ssh-keygen -l` prints it (`SHA256:` + unpadded base64). */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH public key blob (its first string), e.g. `ssh-ed25519`. */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const length = key.readUInt32BE(0);
  if (length <= 0 || length > 64 || key.length < 4 + length) return 'unknown';
  return key.subarray(4, 4 + length).toString('latin1');
}

/** The name under which OpenSSH records a host: `host`, or `[host]:port` for a port other than 22. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** Parses known_hosts text. Malformed lines are skipped. */
export function parseKnownHosts(text: string, fileName = 'known_hosts'): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    let marker: KnownHostEntry['marker'];
    if (fields[0]?.startsWith('@')) {
      const m = fields.shift();
      if (m === '@revoked') marker = 'revoked';
      else if (m === '@cert-authority') marker = 'cert-authority';
      else continue;
    }
    const [hosts, keyType, keyB64] = fields;
    if (!hosts || !keyType || !keyB64 || !/^[A-Za-z0-9+/]+=*$/.test(keyB64)) continue;
    const key = Buffer.from(keyB64, 'base64');
    if (key.length === 0) continue;
    entries.push({ hosts, keyType, key, ...(marker ? { marker } : {}), source: `${fileName}:${i + 1}` });
  }
  return entries;
}

/** Matches one host name against an OpenSSH wildcard pattern (`*`, `?`). */
function wildcardMatch(pattern: string, name: string): boolean {
  let re = '^';
  for (const ch of pattern) {
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${re}$`, 'i').test(name);
}

/** Whether a hashed pattern `|1|salt|hash` stands for `name`. */
function hashedMatch(pattern: string, name: string): boolean {
  const parts = pattern.split('|');
  if (parts.length !== 4 || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64');
  const hash = createHmac('sha1', salt).update(name).digest('base64');
  return hash === parts[3];
}

/**
 * Whether a host patterns field matches the host. `names` are the names to try (e.g. `[h]:2222`);
 * a negated pattern that matches excludes the line.
 */
export function hostPatternsMatch(hosts: string, names: readonly string[]): boolean {
  if (hosts.startsWith('|')) return names.some((n) => hashedMatch(hosts, n));
  let matched = false;
  for (const raw of hosts.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (names.some((n) => wildcardMatch(pattern, n))) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** Reads and parses known_hosts files; missing files count as empty. */
export function loadKnownHosts(paths: readonly string[]): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    entries.push(...parseKnownHosts(text, path));
  }
  return entries;
}

/** The entries for a host (any key type), excluding `@cert-authority` lines. */
export function entriesForHost(
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
): KnownHostEntry[] {
  const names = [knownHostsName(host, port)];
  return entries.filter((e) => e.marker !== 'cert-authority' && hostPatternsMatch(e.hosts, names));
}

/**
 * Checks a presented host key against the entries: `known` when a line for the host has exactly this
 * key, `revoked` when it is marked so, `changed` when the host has other keys (of any type: a server
 * presenting a type we hold no key for is treated as a change, as a man in the middle could choose
 * that), `unknown` when the host has no entry.
 */
export function checkHostKey(
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
  key: Buffer,
): HostKeyStatus {
  const mine = entriesForHost(entries, host, port);
  const revokedAnywhere = entries.some((e) => e.marker === 'revoked' && e.key.equals(key));
  if (revokedAnywhere) return { status: 'revoked' };
  const plain = mine.filter((e) => e.marker === undefined);
  if (plain.some((e) => e.key.equals(key))) return { status: 'known' };
  if (plain.length === 0) return { status: 'unknown' };
  return {
    status: 'changed',
    knownFingerprints: plain.map((e) => fingerprintOf(e.key)),
    knownTypes: [...new Set(plain.map((e) => e.keyType))],
    sources: plain.map((e) => e.source),
  };
}

/** The key types known for a host, to prefer them in the key exchange (as OpenSSH does). */
export function knownKeyTypes(entries: readonly KnownHostEntry[], host: string, port: number): string[] {
  return [
    ...new Set(
      entriesForHost(entries, host, port)
        .filter((e) => e.marker === undefined)
        .map((e) => e.keyType),
    ),
  ];
}

/**
 * Appends an entry for an accepted key, creating the file (0600) and its directory (0700) when missing.
 * `hash: true` writes the host name hashed (`|1|salt|hash`), as OpenSSH's HashKnownHosts does.
 */
export function appendKnownHost(path: string, host: string, port: number, key: Buffer, hash = false): void {
  const name = knownHostsName(host, port);
  let field = name;
  if (hash) {
    const salt = randomBytes(20);
    field = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
  }
  const line = `${field} ${keyTypeOf(key)} ${key.toString('base64')}\n`;
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  let prefix = '';
  const existed = existsSync(path);
  if (existed) {
    const current = readFileSync(path);
    if (current.length > 0 && current[current.length - 1] !== 0x0a) prefix = '\n';
  }
  appendFileSync(path, prefix + line, { mode: 0o600 });
  if (!existed) chmodSync(path, 0o600);
}
