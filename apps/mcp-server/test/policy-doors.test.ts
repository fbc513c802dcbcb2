/**
 * The policy against every other door into a shell, through the real built server and a real MCP client:
 * text typed with respond/send_control (secret text, single keys, submitting keys, line editing and
 * history, type-ahead, `exec`, shells of other names), create_local's env and shell, and parser gaps
 * (arithmetic subscripts, wrappers, deep nesting, redirection, case). Each attack names its own victim file,
 * which must survive.
 */

import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type ServerHandle, startServer } from './harness.js';

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-mcp-policy-doors-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Creates the victim file `name` in the work directory and returns its path. */
function victim(name: string): string {
  const path = join(work, name);
  writeFileSync(path, 'precious\n');
  return path;
}

const survives = (path: string) => existsSync(path) && readFileSync(path, 'utf8') === 'precious\n';

describe('--deny rm: typed input', () => {
  let h: ServerHandle;
  let audit: string;
  const sessions: string[] = [];
  beforeAll(async () => {
    audit = join(work, 'audit-deny.jsonl');
    h = await startServer({ args: ['--deny', 'rm', '--audit-log', audit, '--cwd', work] });
  });
  afterEach(async () => {
    for (const id of sessions.splice(0)) await h.call('close_session', { session_id: id });
  });
  afterAll(async () => h?.close());

  /** A new session running `command` (a shell waiting at its prompt). */
  async function shellIn(command = 'bash --norc'): Promise<string> {
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { cwd: work });
    sessions.push(session_id);
    const r = await h.exec(command, { session_id, pause_timeout: 1 });
    expect(r.status).toBe('partial');
    return r.command_id;
  }

  test('1: secret text is checked, and the audit log holds neither it nor its reason', async () => {
    const file = victim('v1');
    const id = await shellIn();
    const r = await h.call('respond', { command_id: id, text: 'rm -f v1', secret: true });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.text).not.toContain('v1');
    expect(survives(file)).toBe(true);
    expect(readFileSync(audit, 'utf8')).not.toContain('rm -f v1');
  });

  test('2: single-character keys join the pending line and Enter checks it', async () => {
    const file = victim('v2');
    const id = await shellIn();
    const keys = ['r', 'm', 'space', '-', 'f', 'space', 'v', '2', 'enter'];
    const r = await h.call('send_control', { command_id: id, key: keys });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(survives(file)).toBe(true);
    const log = readFileSync(audit, 'utf8').trim().split('\n');
    expect(log.some((l) => l.includes('"send_control"') && l.includes('"deny"'))).toBe(true);
  });

  test.each([['ctrl+j'], ['C-m'], ['^J'], ['ctrl+o']])(
    '3: a line typed without Enter is checked when %s submits it',
    async (key) => {
      const file = victim('v3');
      const id = await shellIn();
      await h.ok('respond', { command_id: id, text: 'rm -f v3', enter: false, pause_timeout: 0.2 });
      const r = await h.call('send_control', { command_id: id, key });
      expect(r.error?.code).toBe('POLICY_DENIED');
      // A later Enter runs nothing of it (the line was cleared, or it is checked again).
      await h.call('send_control', { command_id: id, key: 'enter', pause_timeout: 0.3 });
      expect(survives(file)).toBe(true);
    },
  );

  test.each([
    [['up', 'home', 'delete', 'delete', 'delete', 'delete', 'delete', 'enter']],
    [['home', 'delete', 'delete', 'delete', 'delete', 'delete', 'enter']],
  ])('4: line editing and history keys are refused (%j)', async (keys) => {
    const file = victim('v4');
    const id = await shellIn();
    if (keys[0] === 'up') await h.ok('respond', { command_id: id, text: 'echo rm -f v4' });
    else await h.ok('respond', { command_id: id, text: 'echo rm -f v4', enter: false, pause_timeout: 0.2 });
    const r = await h.call('send_control', { command_id: id, key: keys });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.error?.message).toMatch(/edits the line or recalls history/);
    await h.ok('send_control', { command_id: id, key: 'ctrl+c', pause_timeout: 0.3 });
    expect(survives(file)).toBe(true);
  });

  test('5: type-ahead while the foreground program is not reading the terminal is refused', async () => {
    const file = victim('v5');
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { cwd: work });
    sessions.push(session_id);
    const r = await h.exec('sleep 60; bash --norc', { session_id, pause_timeout: 0.3 });
    expect(r.status).toBe('partial');
    const typed = await h.call('respond', { command_id: r.command_id, text: 'rm -f v5' });
    expect(typed.error?.code).toBe('POLICY_DENIED');
    expect(typed.error?.message).toMatch(/type-ahead/);
    await h.ok('kill_process', { command_id: r.command_id });
    expect(survives(file)).toBe(true);
  });

  test('6: a shell started with exec (the terminal leader itself) is recognised', async () => {
    const file = victim('v6');
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { cwd: work });
    sessions.push(session_id);
    const r = await h.exec('exec bash --norc', { session_id, pause_timeout: 1 });
    const typed = await h.call('respond', { command_id: r.command_id, text: 'rm -f v6' });
    expect(typed.error?.code).toBe('POLICY_DENIED');
    expect(survives(file)).toBe(true);
  });

  test.each([['script -q /dev/null'], ['rbash --norc'], ['exec -a notashell bash --norc']])(
    '7: %s runs typed commands and is checked',
    async (command) => {
      const file = victim('v7');
      const id = await shellIn(command);
      const typed = await h.call('respond', { command_id: id, text: 'rm -f v7' });
      expect(typed.error?.code).toBe('POLICY_DENIED');
      expect(survives(file)).toBe(true);
    },
  );

  test('allowed lines typed into a shell still run', async () => {
    const id = await shellIn();
    const r = await h.ok('respond', { command_id: id, text: 'echo typed-$((6*7))' });
    expect(r.output).toContain('typed-42');
  });
});

describe('--deny rm: session settings', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--deny', 'rm', '--cwd', work] });
  });
  afterAll(async () => h?.close());

  test.each([
    ['PROMPT_COMMAND', 'rm -f v8'],
    ['BASH_ENV', 'v8-env.sh'],
    ['PATH', `${'/tmp'}:/usr/bin:/bin`],
  ])('8: create_local env %s is denied before anything starts', async (name, value) => {
    const file = victim('v8');
    writeFileSync(join(work, 'v8-env.sh'), 'rm -f v8\n');
    const r = await h.call('create_local', { cwd: work, env: { [name]: value } });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.error?.message).toContain(name);
    expect(r.text).not.toContain(value);
    expect(survives(file)).toBe(true);
  });

  test('8: a shell that is not a known shell is refused before it runs', async () => {
    const file = victim('v8s');
    const evil = join(work, 'evil.sh');
    writeFileSync(evil, '#!/bin/sh\nrm -f v8s\nexec /bin/bash "$@"\n');
    chmodSync(evil, 0o755);
    const r = await h.call('create_local', { cwd: work, shell: evil });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.error?.hint).toMatch(/bash/);
    expect(survives(file)).toBe(true);
    const ok = await h.ok<{ session_id: string }>('create_local', { cwd: work, shell: '/bin/bash' });
    await h.ok('close_session', { session_id: ok.session_id });
  });

  test('9-13: parser gaps are denied by execute and check_command, naming why', async () => {
    const file = victim('v9');
    const attacks: [string, string][] = [
      ["[[ 'a[$(rm -f v9)]' -eq 0 ]]", 'policy:arithmetic-injection'],
      ["[[ -v 'a[$(rm -f v9)]' ]]", 'policy:arithmetic-injection'],
      ["for ((i='a[$(rm -f v9)]';0;)); do :; done", 'policy:arithmetic-injection'],
      ["bash /dev/stdin <<< 'rm -f v9'", 'deny rm'],
      ["capsh -- -c 'rm -f v9'", 'deny rm'],
      ["gdb -batch -ex '!rm -f v9'", 'deny rm'],
      ['setpriv rm -f v9', 'deny rm'],
      ['perf stat rm -f v9', 'deny rm'],
      [`${'$('.repeat(300)}ls${')'.repeat(300)}`, 'policy:too-deep'],
      ['RM -f v9', 'deny rm'],
    ];
    for (const [command, rule] of attacks) {
      const r = await h.call('execute', { command });
      expect({ command, code: r.error?.code }).toEqual({ command, code: 'POLICY_DENIED' });
      const d = await h.ok<{ decision: string; commands: Array<{ rule?: string }> }>('check_command', {
        command,
      });
      expect({ command, decision: d.decision }).toEqual({ command, decision: 'deny' });
      expect(d.commands.map((c) => c.rule)).toContain(rule);
    }
    expect(survives(file)).toBe(true);
  });
});

describe('--allow git --allow ls', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--allow', 'git', '--allow', 'ls', '--cwd', work] });
  });
  afterAll(async () => h?.close());

  test('5: text typed while ls runs is refused (the session shell would run it after ls)', async () => {
    const file = victim('v5a');
    const r = await h.exec('ls -R / >/dev/null; ls -R / >/dev/null', { pause_timeout: 0.3 });
    expect(r.status).toBe('partial');
    const typed = await h.call('respond', { command_id: r.command_id, text: 'rm -f v5a' });
    expect(typed.error?.code).toBe('POLICY_DENIED');
    expect(typed.error?.message).toMatch(/type-ahead/);
    await h.ok('kill_process', { command_id: r.command_id });
    expect(survives(file)).toBe(true);
  });

  test('12: output redirection to a file is denied; /dev/null and fds are not', async () => {
    const file = victim('v12');
    for (const command of ['ls > v12', 'ls >| v12', 'git status &> v12']) {
      const r = await h.call('execute', { command });
      expect({ command, code: r.error?.code }).toEqual({ command, code: 'POLICY_DENIED' });
    }
    expect(survives(file)).toBe(true);
    const ok = await h.exec('ls v12 >/dev/null 2>&1 && ls v12');
    expect(ok.output).toBe('v12');
  });
});

describe('no policy: create_local shell is still validated', () => {
  test('8: shell "5" is INVALID_ARGUMENT naming the value and the choices', async () => {
    const h = await startServer({ args: ['--cwd', work] });
    try {
      const r = await h.call('create_local', { shell: '5' });
      expect(r.error?.code).toBe('INVALID_ARGUMENT');
      expect(r.error?.message).toContain('"5"');
      expect(r.error?.hint).toMatch(/bash/);
    } finally {
      await h.close();
    }
  });
});
