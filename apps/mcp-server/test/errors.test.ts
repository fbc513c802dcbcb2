import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';

describe('errors are docs/tools.md tool results and never crash the server', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('unknown command_id → COMMAND_NOT_FOUND', async () => {
    for (const tool of ['read_output', 'kill_process']) {
      const r = await h.call(tool, { command_id: 'c_doesnotexist' });
      expect(r.isError, tool).toBe(true);
      expect(r.error?.code, tool).toBe('COMMAND_NOT_FOUND');
      expect(r.error?.message).toContain('c_doesnotexist');
      expect(r.text).toMatch(/^Error COMMAND_NOT_FOUND: Invalid command_id/);
      expect(r.raw.content).toHaveLength(1);
    }
    const respond = await h.call('respond', { command_id: 'c_doesnotexist', text: 'x' });
    expect(respond.error?.code).toBe('COMMAND_NOT_FOUND');
  });

  test('an unknown or missing shell → INVALID_ARGUMENT naming it and the shells found on this machine', async () => {
    const found = ['bash', 'sh', 'zsh', 'dash', 'fish', 'ksh', 'tcsh'].filter((name) =>
      (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, name))),
    );
    expect(found).toContain('bash');
    const missing = ['fish', 'tcsh', 'ksh'].find((name) => !found.includes(name)) ?? 'no-such-shell';
    for (const shell of [missing, 'no-such-shell', '/nope/bash']) {
      const r = await h.call('create_local', { shell });
      expect(r.error?.code, shell).toBe('INVALID_ARGUMENT');
      expect(r.text, shell).toContain(JSON.stringify(shell));
      const shellsLine = /found on this host: ([^.]*)\./.exec(r.text)?.[1] ?? '';
      for (const name of found) expect(shellsLine.split(', '), shell).toContain(name);
      expect(shellsLine).not.toContain(missing);
    }
    // The server still works, and no session was left half-created.
    expect((await h.exec('echo still-here')).output).toBe('still-here');
    const sessions = await h.call('list_sessions', {});
    expect(sessions.text).not.toContain(missing);
  });

  test('unknown key → INVALID_ARGUMENT listing the valid keys; nothing is sent', async () => {
    const r = await h.exec('cat', { pause_timeout: 0.5 });
    expect(r.status).toBe('partial');
    try {
      const bad = await h.call('send_control', { command_id: r.command_id, key: ['a', 'ctrl+banana'] });
      expect(bad.isError).toBe(true);
      expect(bad.error?.code).toBe('INVALID_ARGUMENT');
      expect(bad.error?.message).toContain('ctrl+banana');
      for (const key of ['esc', 'tab', 'enter', 'pageup', 'f12', 'ctrl+a'])
        expect(bad.error?.message).toContain(key);
      // Nothing was sent: the "a" of the array did not reach cat.
      const after = await h.ok<CommandResult>('read_output', {
        command_id: r.command_id,
        pause_timeout: 0.3,
      });
      expect(after.output).toBe('');
    } finally {
      await h.ok('send_control', { command_id: r.command_id, key: 'ctrl+c' });
    }
  });

  test('out-of-range timeouts → INVALID_ARGUMENT naming the parameter and the valid range', async () => {
    const r = await h.call('execute', { command: 'echo never', pause_timeout: 5000 });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('INVALID_ARGUMENT');
    expect(r.error?.message).toContain('pause_timeout');
    expect(r.error?.message).toContain('5000');
    expect(r.error?.message).toContain('3600');
    const neg = await h.call('execute', { command: 'echo never', total_timeout: -1 });
    expect(neg.error?.code).toBe('INVALID_ARGUMENT');
    expect(neg.error?.message).toContain('total_timeout');
    const kind = await h.call('execute', { command: 'echo never', pause_timeout: 'soon' });
    expect(kind.error?.code).toBe('INVALID_ARGUMENT');
    expect(kind.error?.message).toContain('pause_timeout');
    // Nothing ran.
    const listed = await h.ok<{ processes: unknown[] }>('list_processes', { filter: 'echo never' });
    expect(listed.processes).toEqual([]);
  });

  test('unknown and missing parameters, bad enums → INVALID_ARGUMENT naming them', async () => {
    const typo = await h.call('execute', { command: 'echo x', pause_timout: 1 });
    expect(typo.error?.code).toBe('INVALID_ARGUMENT');
    expect(typo.error?.message).toContain('pause_timout');
    expect(typo.error?.message).toContain('pause_timeout');
    const missing = await h.call('execute', {});
    expect(missing.error?.code).toBe('INVALID_ARGUMENT');
    expect(missing.error?.message).toMatch(/missing required parameter command/);
    const r = await h.exec('echo for-view');
    const view = await h.call('read_output', { command_id: r.command_id, view: 'pixels' });
    expect(view.error?.code).toBe('INVALID_ARGUMENT');
    expect(view.error?.message).toMatch(/"text", "screen", "raw"/);
    const signal = await h.call('kill_process', { command_id: r.command_id, signal: 'SIGBANANA' });
    expect(signal.error?.code).toBe('INVALID_ARGUMENT');
    expect(signal.error?.message).toContain('SIGKILL');
    const regex = await h.call('read_output', { command_id: r.command_id, filter: '(' });
    expect(regex.error?.code).toBe('INVALID_ARGUMENT');
  });

  test('unknown session → SESSION_NOT_FOUND; input to a finished command → COMMAND_FINISHED', async () => {
    const r = await h.call('execute', { command: 'echo x', session_id: 's_nosuchses' });
    expect(r.error?.code).toBe('SESSION_NOT_FOUND');
    expect((await h.call('close_session', { session_id: 's_nosuchses' })).error?.code).toBe(
      'SESSION_NOT_FOUND',
    );
    const done = await h.exec('echo done');
    const late = await h.call('respond', { command_id: done.command_id, text: 'y' });
    expect(late.error?.code).toBe('COMMAND_FINISHED');
    const key = await h.call('send_control', { command_id: done.command_id, key: 'enter' });
    expect(key.error?.code).toBe('COMMAND_FINISHED');
  });

  test('check_command answers without a policy and runs nothing', async () => {
    const r = await h.call('check_command', { command: 'rm -rf /tmp/conch-never-created' });
    expect(r.isError).toBe(false);
    expect(r.structured.decision).toBe('allow');
    expect(Array.isArray(r.structured.commands)).toBe(true);
  });

  test('the server is still healthy after all of that', async () => {
    expect((await h.exec('echo healthy')).output).toBe('healthy');
  });
});
