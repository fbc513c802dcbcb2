import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appendKnownHost,
  checkHostKey,
  fingerprintOf,
  hostPatternsMatch,
  keyTypeOf,
  knownHostsName,
  knownKeyTypes,
  parseKnownHosts,
} from './known-hosts.js';

/** A fake but well-formed key blob of the given type. */
function blob(type: string, seed: string): Buffer {
  const name = Buffer.from(type);
  const body = Buffer.from(seed);
  const len = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  return Buffer.concat([len(name.length), name, len(body.length), body]);
}

const keyA = blob('ssh-ed25519', 'key-a');
const keyB = blob('ssh-ed25519', 'key-b');
const rsa = blob('ssh-rsa', 'key-rsa');
const line = (hosts: string, key: Buffer) => `${hosts} ${keyTypeOf(key)} ${key.toString('base64')}`;
const hashed = (name: string, salt: Buffer) =>
  `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('known_hosts', () => {
  it('names hosts as OpenSSH does', () => {
    expect(knownHostsName('example.org', 22)).toBe('example.org');
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('fingerprints like ssh-keygen -l and reads the key type from the blob', () => {
    expect(fingerprintOf(keyA)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(keyTypeOf(keyA)).toBe('ssh-ed25519');
    expect(keyTypeOf(Buffer.alloc(2))).toBe('unknown');
  });

  it('matches plain, wildcard, negated, bracketed and hashed host patterns', () => {
    expect(hostPatternsMatch('a.example,b.example', ['b.example'])).toBe(true);
    expect(hostPatternsMatch('*.example', ['x.example'])).toBe(true);
    expect(hostPatternsMatch('*.example,!bad.example', ['bad.example'])).toBe(false);
    expect(hostPatternsMatch('[127.0.0.1]:2222', ['[127.0.0.1]:2222'])).toBe(true);
    expect(hostPatternsMatch('127.0.0.1', ['[127.0.0.1]:2222'])).toBe(false);
    const salt = Buffer.from('0123456789abcdefghij');
    expect(hostPatternsMatch(hashed('[h]:2200', salt), ['[h]:2200'])).toBe(true);
    expect(hostPatternsMatch(hashed('[h]:2200', salt), ['h'])).toBe(false);
  });

  it('tells known, unknown, changed and revoked keys apart', () => {
    const text = [
      '# comment',
      '',
      line('known.example', keyA),
      '@cert-authority *.example ' + `${keyTypeOf(keyB)} ${keyB.toString('base64')}`,
      `@revoked * ${keyTypeOf(rsa)} ${rsa.toString('base64')}`,
      'garbage line',
    ].join('\n');
    const entries = parseKnownHosts(text, 'kh');
    expect(entries).toHaveLength(3);
    expect(checkHostKey(entries, 'known.example', 22, keyA)).toEqual({ status: 'known' });
    expect(checkHostKey(entries, 'other.example', 22, keyA)).toEqual({ status: 'unknown' });
    expect(checkHostKey(entries, 'known.example', 22, rsa)).toEqual({ status: 'revoked' });
    const changed = checkHostKey(entries, 'known.example', 22, keyB);
    expect(changed).toMatchObject({
      status: 'changed',
      knownFingerprints: [fingerprintOf(keyA)],
      sources: ['kh:3'],
    });
    // A different port is a different host.
    expect(checkHostKey(entries, 'known.example', 2222, keyB)).toEqual({ status: 'unknown' });
    expect(knownKeyTypes(entries, 'known.example', 22)).toEqual(['ssh-ed25519']);
  });

  it('records a new key (plain or hashed) in a 0600 file it creates', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conch-kh-'));
    dirs.push(dir);
    const path = join(dir, 'sub', 'known_hosts');
    appendKnownHost(path, '127.0.0.1', 2222, keyA);
    expect(readFileSync(path, 'utf8')).toBe(`${line('[127.0.0.1]:2222', keyA)}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    appendKnownHost(path, 'h.example', 22, keyB, true);
    const entries = parseKnownHosts(readFileSync(path, 'utf8'));
    expect(entries[1]?.hosts).toMatch(/^\|1\|/);
    expect(checkHostKey(entries, 'h.example', 22, keyB)).toEqual({ status: 'known' });
    // A file without a final newline gets one before the new line.
    const other = join(dir, 'kh2');
    writeFileSync(other, line('a.example', keyA));
    appendKnownHost(other, 'b.example', 22, keyB);
    expect(readFileSync(other, 'utf8').split('\n')).toHaveLength(3);
  });
});
