import { describe, expect, it } from 'vitest';
import { ConchError } from '../errors.js';
import { sandboxFailureHint } from './failure-hint.js';
import { chooseSandbox, resolveSandboxRules, type SandboxRules, sandboxWidening } from './rules.js';

const facts = { home: '/home/u', cwd: '/work/p', alwaysDenied: ['/run/user/1000'] };

describe('resolveSandboxRules', () => {
  it('true gives the defaults: the cwd writable, the secret stores and services hidden, no network', () => {
    const rules = resolveSandboxRules(true, facts)!;
    expect(rules.write).toEqual(['/work/p']);
    expect(rules.network).toBe('none');
    for (const p of ['/home/u/.ssh', '/home/u/.aws', '/home/u/.gnupg', '/home/u/.conch', '/run/user'])
      expect(rules.deny_read).toContain(p);
    expect(resolveSandboxRules(false, facts)).toBeUndefined();
  });

  it('resolves ~ and relative paths, keeps only the outermost, and adds deny_read to the defaults', () => {
    const rules = resolveSandboxRules({ write: ['~/a', 'b', 'b/c', '/x/../y'], deny_read: ['s'] }, facts)!;
    expect(rules.write.sort()).toEqual(['/home/u/a', '/work/p/b', '/y']);
    expect(rules.deny_read).toContain('/work/p/s');
    expect(rules.deny_read).toContain('/home/u/.ssh');
  });

  it('refuses malformed requests, naming the value', () => {
    for (const bad of [
      { network: 'some' },
      { network: ['bad host'] },
      { write: '/x' },
      { other: 1 },
      'yes',
    ]) {
      expect(() => resolveSandboxRules(bad as never, facts)).toThrow(ConchError);
    }
    expect(resolveSandboxRules({ network: ['Example.COM', '*.npmjs.org', '::1'] }, facts)?.network).toEqual([
      'example.com',
      '*.npmjs.org',
      '::1',
    ]);
  });
});

describe('sandboxWidening and chooseSandbox', () => {
  const bound = resolveSandboxRules({ write: ['/work'], network: ['a.com', 'b.com'] }, facts)!;

  it('allows the same or narrower rules', () => {
    expect(sandboxWidening(bound, bound)).toBeUndefined();
    expect(
      sandboxWidening(resolveSandboxRules({ write: ['/work/p/sub'], network: ['a.com'] }, facts)!, bound),
    ).toBeUndefined();
    expect(
      sandboxWidening(resolveSandboxRules({ write: [], network: 'none' }, facts)!, bound),
    ).toBeUndefined();
  });

  it('names what widens: a write outside, a write into a hidden path, more network', () => {
    const wider = (r: object) => sandboxWidening(resolveSandboxRules(r, facts)!, bound);
    expect(wider({ write: ['/etc'] })).toContain('/etc is outside');
    expect(wider({ write: ['/work', '/home/u/.ssh'] })).toContain('/home/u/.ssh is outside');
    expect(wider({ write: ['/work'], network: 'all' })).toContain('network all');
    expect(wider({ write: ['/work'], network: ['c.com'] })).toContain('c.com');
    const hidden: SandboxRules = { ...bound, deny_read: bound.deny_read.filter((p) => !p.endsWith('.ssh')) };
    expect(sandboxWidening(hidden, bound)).toContain('/home/u/.ssh must stay unreadable');
  });

  it('under required, refuses dropping or widening with POLICY_DENIED; otherwise takes the request', () => {
    const policy = { rules: bound, required: true };
    expect(chooseSandbox(undefined, policy, facts)).toBe(bound);
    expect(() => chooseSandbox(false, policy, facts)).toThrow(/requires every session/);
    expect(() => chooseSandbox({ network: 'all' }, policy, facts)).toThrow(/wider/);
    expect(chooseSandbox(false, { rules: bound, required: false }, facts)).toBeUndefined();
  });
});

describe('sandboxFailureHint', () => {
  const rules = resolveSandboxRules({ deny_read: ['/data/secret'] }, facts)!;

  it('names a write refused outside the writable paths, relative paths against the cwd', () => {
    expect(sandboxFailureHint(rules, "rm: cannot remove '/etc/x': Read-only file system", 1)).toBe(
      "/etc/x is outside the sandbox's writable paths: /work/p, /tmp (private; $TMPDIR).",
    );
    expect(sandboxFailureHint(rules, 'bash: out.txt: Read-only file system', 1, '/srv')).toContain(
      '/srv/out.txt is outside',
    );
    expect(sandboxFailureHint(rules, "OSError: [Errno 30] Read-only file system: 'v'", 1, '/a')).toContain(
      '/a/v',
    );
  });

  it('names a hidden path, a closed network, and says nothing of other failures or of success', () => {
    expect(sandboxFailureHint(rules, 'cat: /data/secret/k: No such file or directory', 1)).toContain(
      'deny_read: /data/secret',
    );
    expect(sandboxFailureHint(rules, 'curl: (6) Could not resolve host: example.com', 6)).toContain(
      'no network',
    );
    expect(sandboxFailureHint(rules, 'grep: x: No such file or directory', 2, '/work/p')).toBeUndefined();
    expect(sandboxFailureHint(rules, 'Read-only file system', 0)).toBeUndefined();
    expect(sandboxFailureHint({ ...rules, network: 'all' }, 'Connection refused', 1)).toBeUndefined();
  });
});
