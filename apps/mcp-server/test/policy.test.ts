/**
 * The command policy through the real server: flags, a config file with examples, Gemini-style settings,
 * check_command, POLICY_DENIED results, and the audit log (which never holds a secret).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, type ServerHandle, startServer } from './harness.js';

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-mcp-policy-'));
  writeFileSync(join(work, 'victim'), 'precious');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('--deny rm with an audit log', () => {
  let h: ServerHandle;
  let audit: string;
  beforeAll(async () => {
    audit = join(work, 'audit.jsonl');
    h = await startServer({ args: ['--deny', 'rm', '--audit-log', audit, '--cwd', work] });
  });
  afterAll(async () => h?.close());

  test('a denied command is an error result naming the rule and the sub-command; nothing runs', async () => {
    const r = await h.call('execute', { command: 'echo ok\n/bin/r""m -f victim' });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.error?.data?.rule).toBe('deny rm');
    expect(String(r.error?.data?.command)).toContain('victim');
    expect(existsSync(join(work, 'victim'))).toBe(true);
  });

  test('check_command explains each sub-command without running anything', async () => {
    const d = await h.ok<{
      decision: string;
      commands: Array<{ argv: string[]; decision: string; rule?: string }>;
    }>('check_command', { command: 'ls | xargs rm' });
    expect(d.decision).toBe('deny');
    expect(d.commands.find((c) => c.decision === 'deny')?.argv[0]).toBe('rm');
    const allowed = await h.ok<{ decision: string }>('check_command', { command: 'git status && ls -la' });
    expect(allowed.decision).toBe('allow');
  });

  test('allowed commands run; the audit log records decisions but never a secret', async () => {
    const r = await h.exec('read -s -p \'Password: \' pw; echo "len=${#pw}"');
    expect(r.prompt?.kind).toBe('password');
    const done = await h.ok('respond', { command_id: r.command_id, text: 'sup3r-secret-pw', secret: true });
    expect(done.output).toContain('len=15');
    const log = readFileSync(audit, 'utf8');
    const lines = log
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { decision: string; input: string });
    expect(lines.some((l) => l.decision === 'deny' && l.input.includes('victim'))).toBe(true);
    expect(log).not.toContain('sup3r-secret-pw');
  });
});

describe('policy from files', () => {
  test('a config file rule with a failing example stops the server at start-up', () => {
    const config = join(work, 'bad.config.json');
    writeFileSync(config, JSON.stringify({ policy: { deny: [{ prefix: 'rm', match: ['rmdir x'] }] } }));
    const r = spawnSync(process.execPath, [BIN, '--config', config], {
      input: '',
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/rmdir x/);
  });

  test('Gemini/Ollama-style tools.core allows only what it lists', async () => {
    const settings = join(work, 'settings.json');
    writeFileSync(
      settings,
      JSON.stringify({ tools: { core: ['run_shell_command(git)', 'run_shell_command(echo)'] } }),
    );
    const h = await startServer({ args: ['--policy-file', settings, '--cwd', work] });
    try {
      expect((await h.exec('echo allowed')).output).toBe('allowed');
      const denied = await h.call('execute', { command: 'ls' });
      expect(denied.error?.code).toBe('POLICY_DENIED');
    } finally {
      await h.close();
    }
  });
});
