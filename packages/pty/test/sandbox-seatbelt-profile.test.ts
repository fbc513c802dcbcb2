/**
 * The Seatbelt profile of a macOS sandbox (docs/sandbox.md "macOS"), built from resolved rules. Seatbelt
 * itself runs only on macOS (the macOS workflow runs sandbox-seatbelt-session.test.ts); here the profile
 * is read the way Seatbelt reads it: the last rule that matches an operation on a path decides, a
 * `subpath` matches the path and everything below it, a `literal` only the path, and the paths are the
 * `-D` parameters' values.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSandboxRules, type SandboxRules } from '@conch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalPath } from '../src/sandbox/canonical-path.js';
import {
  type SeatbeltProfile,
  seatbeltCommandLine,
  seatbeltEnvironment,
  seatbeltProfile,
} from '../src/sandbox/seatbelt-profile.js';

type Op = 'file-read-data' | 'file-write-data' | 'file-write-unlink';

/** Whether `op` on `path` is allowed by `sb`, last matching rule first (the file rules only). */
function allowed(sb: SeatbeltProfile, op: Op, path: string): boolean {
  let verdict = false;
  for (const line of sb.profile.split('\n')) {
    if (!/^\((allow|deny) /.test(line)) continue;
    const open = line.indexOf(' (');
    const [verb, ...ops] = line.slice(1, open < 0 ? -1 : open).split(' ');
    if (!ops.some((o) => (o.endsWith('*') ? op.startsWith(o.slice(0, -1)) : o === op))) continue;
    const filters = open < 0 ? undefined : line.slice(open + 1, -1);
    let matches: boolean;
    if (filters === undefined) matches = true;
    else {
      const found = [...filters.matchAll(/\((subpath|literal) \(param "(P\d+)"\)\)/g)];
      if (found.length === 0) continue; // devices, vnode types: not about these paths
      matches = found.some(([, kind, name]) => {
        const value = sb.params[name as string];
        expect(value, `parameter ${name} has a value`).toBeDefined();
        return kind === 'literal'
          ? path === value
          : path === value || path.startsWith(`${value === '/' ? '' : value}/`);
      });
    }
    if (matches) verdict = verb === 'allow';
  }
  return verdict;
}

const canRead = (sb: SeatbeltProfile, path: string) => allowed(sb, 'file-read-data', path);
const canWrite = (sb: SeatbeltProfile, path: string) => allowed(sb, 'file-write-data', path);
const canUnlink = (sb: SeatbeltProfile, path: string) => allowed(sb, 'file-write-unlink', path);

/** Parentheses balance outside string literals, and no string is left open. */
function balanced(profile: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < profile.length; i++) {
    const c = profile[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === ';') i = profile.indexOf('\n', i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
    if (i < 0) break;
  }
  return depth === 0 && !inString;
}

let root: string;
let real: string;
let link: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'conch-seatbelt-')));
  real = join(root, 'real');
  link = join(root, 'link');
  mkdirSync(join(real, 'work', 'sub'), { recursive: true });
  mkdirSync(join(real, 'driver', 's1'), { recursive: true });
  mkdirSync(join(real, 'driver', 's2'), { recursive: true });
  symlinkSync(real, link);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function plan(rules: Partial<SandboxRules>, proxyPort?: number) {
  return {
    launch: {
      rules: { write: [], deny_read: [], network: 'none' as const, ...rules },
      privateDir: join(real, 'driver', 's1'),
    },
    tmpDir: join(real, 'driver', 's1.tmp'),
    hide: [join(real, 'driver')],
    ...(proxyPort === undefined ? {} : { proxyPort }),
  };
}

describe('the Seatbelt profile', () => {
  it('denies by default and allows what ordinary programs need', () => {
    const sb = seatbeltProfile(plan({ write: [join(real, 'work')] }));
    expect(sb.profile.startsWith('(version 1)\n(deny default)\n')).toBe(true);
    for (const rule of [
      '(allow process-exec)',
      '(allow process-fork)',
      '(allow signal (target same-sandbox))',
      '(allow sysctl-read)',
      '(allow pseudo-tty)',
      '(allow file-read*)',
      '(global-name "com.apple.system.opendirectoryd.libinfo")',
      '(literal "/dev/null")',
      '(literal "/dev/tty")',
      '(literal "/dev/ptmx")',
    ]) {
      expect(sb.profile).toContain(rule);
    }
    expect(balanced(sb.profile)).toBe(true);
  });

  it('makes the writable paths, the private directory and the temp dir writable, and nothing else', () => {
    const work = join(real, 'work');
    const sb = seatbeltProfile(plan({ write: [work] }));
    expect(canWrite(sb, join(work, 'sub', 'f'))).toBe(true);
    expect(canWrite(sb, join(real, 'driver', 's1', 'init.sh'))).toBe(true);
    expect(canWrite(sb, join(real, 'driver', 's1.tmp', 'x'))).toBe(true);
    expect(canWrite(sb, '/etc/hosts')).toBe(false);
    expect(canWrite(sb, join(real, 'elsewhere'))).toBe(false);
    // The host's /tmp is readable, not writable (Seatbelt cannot give the sandbox its own /tmp).
    expect(canWrite(sb, '/tmp/x')).toBe(false);
    expect(canRead(sb, '/etc/hosts')).toBe(true);
  });

  it('hides deny_read and the other sessions’ private files, keeping the own ones usable', () => {
    const sb = seatbeltProfile(plan({ write: [join(real, 'work')], deny_read: [join(real, 'secret')] }));
    expect(canRead(sb, join(real, 'secret'))).toBe(false);
    expect(canRead(sb, join(real, 'secret', 'key'))).toBe(false);
    expect(canRead(sb, join(real, 'driver', 's2', 'env'))).toBe(false);
    expect(canRead(sb, join(real, 'driver', 's1', 'env'))).toBe(true);
    expect(canRead(sb, join(real, 'driver', 's1.tmp', 'x'))).toBe(true);
    expect(canWrite(sb, join(real, 'driver', 's2', 'env'))).toBe(false);
  });

  it('lets the most specific path win, as on Linux', () => {
    const home = join(real, 'work');
    const rules = resolveSandboxRules(true, { home, cwd: home })!;
    const sb = seatbeltProfile(plan(rules));
    // ~/.ssh stays hidden, and unwritable, in a writable home.
    expect(canWrite(sb, join(home, 'notes'))).toBe(true);
    expect(canRead(sb, join(home, '.ssh', 'id_ed25519'))).toBe(false);
    expect(canWrite(sb, join(home, '.ssh', 'authorized_keys'))).toBe(false);
    expect(canRead(sb, join(home, '.config', 'gh', 'hosts.yml'))).toBe(false);
    expect(canRead(sb, join(home, '.config', 'other'))).toBe(true);
    // A writable path inside a hidden one is usable again; a hidden one inside that is hidden again.
    const nested = seatbeltProfile(
      plan({
        write: [join(real, 'hidden', 'open')],
        deny_read: [join(real, 'hidden'), join(real, 'hidden', 'open', 'closed')],
      }),
    );
    expect(canRead(nested, join(real, 'hidden', 'x'))).toBe(false);
    expect(canRead(nested, join(real, 'hidden', 'open', 'x'))).toBe(true);
    expect(canWrite(nested, join(real, 'hidden', 'open', 'x'))).toBe(true);
    expect(canRead(nested, join(real, 'hidden', 'open', 'closed', 'x'))).toBe(false);
    // At one path, hiding wins.
    const same = seatbeltProfile(plan({ write: [join(real, 'work')], deny_read: [join(real, 'work')] }));
    expect(canRead(same, join(real, 'work', 'f'))).toBe(false);
    expect(canWrite(same, join(real, 'work', 'f'))).toBe(false);
  });

  it('keeps a hidden path inside a writable one from being moved from under its rule', () => {
    const work = join(real, 'work');
    const sb = seatbeltProfile(plan({ write: [work], deny_read: [join(work, 'sub', 'secret')] }));
    // `mv sub sub2; cat sub2/secret` fails at the rename; the secret itself cannot be renamed either.
    expect(canUnlink(sb, join(work, 'sub'))).toBe(false);
    expect(canUnlink(sb, join(work, 'sub', 'secret'))).toBe(false);
    // Everything else in the writable path can still be removed.
    expect(canUnlink(sb, join(work, 'sub', 'other'))).toBe(true);
    expect(canUnlink(sb, join(work, 'file'))).toBe(true);
    // Hard links are never allowed: nothing in the profile grants file-link.
    expect(sb.profile).not.toMatch(/\(allow[^)]*file-link/);
  });

  it('names canonical paths (symbolic links resolved), and hides a path under both spellings', () => {
    const sb = seatbeltProfile(
      plan({
        write: [join(link, 'work')],
        deny_read: [join(link, 'secret'), join(link, 'missing', 'deeper')],
      }),
    );
    const values = Object.values(sb.params);
    expect(values).toContain(join(real, 'work'));
    expect(values).not.toContain(join(link, 'work'));
    expect(canWrite(sb, join(real, 'work', 'f'))).toBe(true);
    expect(canRead(sb, join(real, 'secret', 'k'))).toBe(false);
    expect(canRead(sb, join(link, 'secret', 'k'))).toBe(false);
    // A path that does not exist yet is canonical in its existing part.
    expect(canonicalPath(join(link, 'missing', 'deeper'))).toBe(join(real, 'missing', 'deeper'));
    expect(canRead(sb, join(real, 'missing', 'deeper', 'x'))).toBe(false);
    expect(canonicalPath('/')).toBe('/');
    expect(canonicalPath(`${link}/./work/../work/`)).toBe(join(real, 'work'));
  });

  it('never puts a path into the profile text, so quotes, backslashes and parentheses cannot widen it', () => {
    const evil = join(real, 'a"b\\c) (allow file-write* (subpath "x")) ;\nd');
    const plain = join(real, 'plainname');
    const withEvil = seatbeltProfile(plan({ write: [evil], deny_read: [`${evil}/x`] }));
    const withPlain = seatbeltProfile(plan({ write: [plain], deny_read: [`${plain}/x`] }));
    expect(withEvil.profile).toBe(withPlain.profile);
    expect(withEvil.profile).not.toContain('a"b');
    expect(Object.values(withEvil.params)).toContain(evil);
    expect(balanced(withEvil.profile)).toBe(true);
    expect(canWrite(withEvil, '/etc/passwd')).toBe(false);
    expect(canWrite(withEvil, join(evil, 'f'))).toBe(true);
    expect(canRead(withEvil, join(evil, 'x', 'f'))).toBe(false);
  });

  it('network none: no network but unix sockets under the writable paths', () => {
    const work = join(real, 'work');
    const sb = seatbeltProfile(plan({ write: [work] }));
    expect(sb.profile).not.toContain('(allow network*)');
    expect(sb.profile).not.toContain('remote ip');
    expect(sb.profile).toContain('(allow system-socket (socket-domain AF_UNIX))');
    const name = Object.entries(sb.params).find(([, v]) => v === work)?.[0];
    expect(sb.profile).toContain(`(allow network-outbound (remote unix-socket (subpath (param "${name}"))))`);
    expect(sb.profile).toContain(
      `(allow network-bind network-inbound (local unix-socket (subpath (param "${name}"))))`,
    );
  });

  it('network all: everything, but the hidden paths’ sockets', () => {
    const sb = seatbeltProfile(plan({ network: 'all', deny_read: ['/var/run/docker.sock'] }));
    expect(sb.profile).toContain('(allow network*)');
    expect(sb.profile).toContain('(global-name "com.apple.dnssd.service")');
    const name = Object.entries(sb.params).find(([, v]) => v === '/var/run/docker.sock')?.[0];
    const allow = sb.profile.indexOf('(allow network*)');
    const deny = sb.profile.indexOf(
      `(deny network-outbound (remote unix-socket (subpath (param "${name}"))))`,
    );
    expect(deny).toBeGreaterThan(allow);
  });

  it('a host list: only the proxy’s port on loopback, and the proxy variables point at it', () => {
    const sb = seatbeltProfile(plan({ network: ['example.com', '127.0.0.1'] }, 43210));
    expect(sb.profile).not.toContain('(allow network*)');
    expect([...sb.profile.matchAll(/remote ip "([^"]*)"/g)].map((m) => m[1])).toEqual(['localhost:43210']);
    expect(() => seatbeltProfile(plan({ network: ['example.com'] }))).toThrow(/proxy's port/);
    expect(() => seatbeltProfile(plan({ network: ['example.com'] }, 70000))).toThrow(/proxy's port/);
    const env = seatbeltEnvironment({ tmpDir: join(link, 'driver', 's1.tmp'), proxyPort: 43210 });
    expect(env).toMatchObject({
      TMPDIR: join(real, 'driver', 's1.tmp'),
      HTTP_PROXY: 'http://127.0.0.1:43210',
      HTTPS_PROXY: 'http://127.0.0.1:43210',
      ALL_PROXY: 'http://127.0.0.1:43210',
      https_proxy: 'http://127.0.0.1:43210',
      NO_PROXY: '',
    });
    expect(seatbeltEnvironment({ tmpDir: '/' })).toEqual({ TMPDIR: '/' });
  });

  it('runs as sandbox-exec -p PROFILE -DNAME=VALUE … -- program args', () => {
    const sb = seatbeltProfile(plan({ write: [join(real, 'work')] }));
    const argv = seatbeltCommandLine(sb, '/bin/zsh', ['-i', '--', '-x']);
    expect(argv[0]).toBe('-p');
    expect(argv[1]).toBe(sb.profile);
    const params = argv.slice(2, argv.indexOf('--'));
    expect(params).toEqual(Object.entries(sb.params).map(([k, v]) => `-D${k}=${v}`));
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '/bin/zsh', '-i', '--', '-x']);
  });
});
