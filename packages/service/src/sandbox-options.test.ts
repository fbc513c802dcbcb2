import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCliArgs } from './cli-options.js';
import { ConfigError, resolveConfig } from './config.js';
import { parseSandboxNetwork, sandboxRequestFromFlags } from './sandbox-options.js';

describe('the sandbox flags', () => {
  it('parse --sandbox-network as none, all or hosts, naming a bad value', () => {
    expect(parseSandboxNetwork('none')).toBe('none');
    expect(parseSandboxNetwork('all')).toBe('all');
    expect(parseSandboxNetwork('a.com, 127.0.0.1')).toEqual(['a.com', '127.0.0.1']);
    expect(() => parseSandboxNetwork('bad host!')).toThrow(/bad host!/);
  });

  it('ask for nothing without flags, the defaults with --sandbox, the cwd plus --sandbox-write dirs', () => {
    expect(sandboxRequestFromFlags({}, '/w')).toBeUndefined();
    expect(sandboxRequestFromFlags({ sandbox: true }, '/w')).toBe(true);
    expect(sandboxRequestFromFlags({ sandboxWrite: ['/x'], sandboxNetwork: ['a.com'] }, '/w')).toEqual({
      write: ['/w', '/x'],
      network: ['a.com'],
    });
    expect(sandboxRequestFromFlags({ sandboxRequired: true }, '/w')).toBe(true);
  });

  it('reach the resolved config from the command line', () => {
    const parsed = parseCliArgs(['--sandbox-required', '--sandbox-network', 'all'], '0');
    expect(parsed.kind).toBe('run');
    if (parsed.kind !== 'run') return;
    const config = resolveConfig(parsed.settings);
    expect(config.sandbox).toEqual({ request: { network: 'all' }, required: true });
    expect(resolveConfig({}).sandbox).toEqual({ request: undefined, required: false });
  });
});

describe("the config file's sandbox section", () => {
  const withFile = (content: unknown, run: (path: string, dir: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), 'conch-sandbox-config-'));
    try {
      const path = join(dir, 'conch.config.json');
      writeFileSync(path, JSON.stringify(content));
      run(path, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('takes rules with paths relative to the file, and flags win key by key', () => {
    withFile(
      { sandbox: { write: ['out'], deny_read: ['secret'], network: ['a.com'], required: true } },
      (path, dir) => {
        expect(resolveConfig({ config: path }).sandbox).toEqual({
          request: { write: [join(dir, 'out')], deny_read: [join(dir, 'secret')], network: ['a.com'] },
          required: true,
        });
        expect(resolveConfig({ config: path, sandboxNetwork: 'none' }).sandbox.request).toEqual({
          write: [join(dir, 'out')],
          deny_read: [join(dir, 'secret')],
          network: 'none',
        });
      },
    );
    withFile({ sandbox: true }, (path) => {
      expect(resolveConfig({ config: path }).sandbox).toEqual({ request: true, required: false });
    });
  });

  it('refuses an unknown key, naming the valid ones', () => {
    withFile({ sandbox: { writable: ['x'] } }, (path) => {
      expect(() => resolveConfig({ config: path })).toThrow(ConfigError);
      expect(() => resolveConfig({ config: path })).toThrow(/write, deny_read, network, required/);
    });
  });
});
