import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConchError } from '@conch/core';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_POLICY_CONFIG,
  loadPolicyConfigFile,
  mergePolicyConfigs,
  parsePolicyConfig,
  policyConfigFromConchConfig,
  policyConfigFromFlags,
  policyConfigFromGeminiSettings,
} from './config.js';
import { Policy } from './policy.js';

const dir = mkdtempSync(join(tmpdir(), 'conch-policy-config-'));
const file = (name: string, json: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
};

describe('policy configuration', () => {
  it('parses { allow, deny } with defaults', () => {
    expect(parsePolicyConfig({})).toEqual({ allow: [], deny: [] });
    expect(parsePolicyConfig({ allow: ['git', { prefix: 'ls', match: ['ls -la'] }] })).toEqual({
      allow: ['git', { prefix: 'ls', match: ['ls -la'] }],
      deny: [],
    });
  });

  it('reports what is wrong and where', () => {
    expect(() => parsePolicyConfig({ allow: 'git' }, 'x.json')).toThrow(
      /Invalid policy configuration in x\.json/,
    );
    expect(() => parsePolicyConfig({ deny: [{ prefix: 'rm', extra: 1 }] })).toThrow(ConchError);
    expect(() => parsePolicyConfig({ deny: [''] })).toThrow(/must not be empty/);
  });

  it('reads --allow/--deny flags', () => {
    expect(policyConfigFromFlags({ allow: ['git', 'ls -la'], deny: ['rm'] })).toEqual({
      allow: ['git', 'ls -la'],
      deny: ['rm'],
    });
    expect(policyConfigFromFlags({})).toEqual(EMPTY_POLICY_CONFIG);
  });

  it('reads conch.config.json, ignoring other sections', () => {
    expect(policyConfigFromConchConfig({ sessions: { max: 3 }, policy: { deny: ['rm'] } })).toEqual({
      allow: [],
      deny: ['rm'],
    });
    expect(policyConfigFromConchConfig({ sessions: {} })).toEqual(EMPTY_POLICY_CONFIG);
    expect(() => policyConfigFromConchConfig({ policy: { allow: [1] } })).toThrow(/conch\.config\.json/);
  });

  it('reads Gemini / Ollama settings', () => {
    expect(
      policyConfigFromGeminiSettings({
        tools: {
          core: ['run_shell_command(git)', 'run_shell_command(ls -la)', 'read_file', 'ShellTool(wc)'],
          exclude: ['run_shell_command(rm)', 'write_file'],
        },
        theme: 'dark',
      }),
    ).toEqual({ allow: ['git', 'ls -la', 'wc'], deny: ['rm'] });
    expect(
      policyConfigFromGeminiSettings({ tools: { core: ['run_shell_command', 'run_shell_command(git)'] } }),
    ).toEqual({
      allow: ['*'],
      deny: [],
    });
    expect(policyConfigFromGeminiSettings({ tools: { core: ['read_file'] } })).toEqual(EMPTY_POLICY_CONFIG);
    expect(policyConfigFromGeminiSettings({ tools: { exclude: ['run_shell_command'] } })).toEqual({
      allow: [],
      deny: ['*'],
    });
    expect(
      policyConfigFromGeminiSettings({ coreTools: ['run_shell_command(git)'], excludeTools: [] }),
    ).toEqual({
      allow: ['git'],
      deny: [],
    });
    expect(() => policyConfigFromGeminiSettings({ tools: { core: 'git' } })).toThrow(ConchError);
  });

  it('a bare run_shell_command in core allows everything not excluded', () => {
    const p = new Policy(
      policyConfigFromGeminiSettings({
        tools: { core: ['run_shell_command'], exclude: ['run_shell_command(rm)'] },
      }),
    );
    expect(p.evaluate('make test').decision).toBe('allow');
    expect(p.evaluate('rm x').decision).toBe('deny');
  });

  it('loads files of either kind', () => {
    expect(loadPolicyConfigFile(file('conch.config.json', { policy: { allow: ['git'] } }))).toEqual({
      allow: ['git'],
      deny: [],
    });
    expect(
      loadPolicyConfigFile(file('settings.json', { tools: { exclude: ['run_shell_command(rm)'] } })),
    ).toEqual({
      allow: [],
      deny: ['rm'],
    });
    expect(loadPolicyConfigFile(file('plain.json', { deny: ['rm'] }))).toEqual({ allow: [], deny: ['rm'] });
    expect(loadPolicyConfigFile(file('other.json', { unrelated: true }))).toEqual(EMPTY_POLICY_CONFIG);
    expect(() => loadPolicyConfigFile(file('broken.json', '{ nope'))).toThrow(
      /Cannot read the policy configuration .*broken\.json/,
    );
    expect(() => loadPolicyConfigFile(join(dir, 'missing.json'))).toThrow(ConchError);
  });

  it('merges sources, keeping each rule once', () => {
    const merged = mergePolicyConfigs(
      policyConfigFromFlags({ allow: ['git'], deny: ['rm'] }),
      { allow: ['ls', 'git'], deny: [{ prefix: 'rm -rf', match: ['rm -rf /'] }] },
      EMPTY_POLICY_CONFIG,
    );
    expect(merged).toEqual({ allow: ['git', 'ls'], deny: ['rm', { prefix: 'rm -rf', match: ['rm -rf /'] }] });
  });
});
