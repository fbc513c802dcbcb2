import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer, type ToolCall } from './harness.js';

describe('prompts, keys and full-screen programs (real PTY, built server over stdio)', () => {
  let h: ServerHandle;
  let dir: string;
  beforeAll(async () => {
    h = await startServer({ args: ['--log-level', 'debug'] });
    dir = mkdtempSync(join(tmpdir(), 'conch-mcp-test-'));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('read -s password prompt → awaiting_input/password; respond secret completes; the secret appears nowhere', async () => {
    const secret = 'hunter2-Zq9-very-secret';
    const calls: ToolCall<CommandResult>[] = [];

    const command = 'read -s -p \'Password: \' p; echo "got ${#p}"';
    const first = await h.call<CommandResult>('execute', { command });
    calls.push(first);
    const r = first.structured;
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('awaiting_input');
    expect(r.state).toBe('awaiting_input');
    expect(r.prompt?.kind).toBe('password');
    expect(r.prompt?.text).toMatch(/Password:/);
    expect(first.text).toBe(
      `[waiting at a password prompt · next: respond command_id=${r.command_id} secret=true]\nPassword: `,
    );
    const answered = await h.call<CommandResult>('respond', {
      command_id: r.command_id,
      text: secret,
      secret: true,
    });
    calls.push(answered);
    expect(answered.structured.status).toBe('completed');
    expect(answered.structured.exit_code).toBe(0);
    expect(answered.structured.output).toContain(`got ${secret.length}`);
    // Everything that could carry it: every result (structured and text), the raw view, pages, the process
    // list, the server's log.
    calls.push(await h.call<CommandResult>('read_output', { command_id: r.command_id, view: 'raw' }));
    calls.push(await h.call<CommandResult>('read_output', { command_id: r.command_id, offset: 0 }));
    const everything = [
      ...calls.map((c) => JSON.stringify(c.raw)),
      JSON.stringify((await h.call('list_processes')).raw),
      JSON.stringify((await h.call('list_sessions')).raw),
      h.stderr(),
    ].join('\n');
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('hunter2');
  });

  test('python3 input() → awaiting_input; respond finishes it', async () => {
    const r = await h.exec(`python3 -c 'x = input("Name: "); print("hello " + x)'`);
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('awaiting_input');
    expect(r.prompt?.kind).toBe('text');
    expect(r.prompt?.text).toMatch(/Name:/);
    const done = await h.ok<CommandResult>('respond', { command_id: r.command_id, text: 'Ada' });
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(0);
    expect(done.output).toContain('hello Ada');
  });

  test('ctrl+c on sleep 100 → exit code 130 / SIGINT, and the session keeps working', async () => {
    const r = await h.exec('sleep 100', { pause_timeout: 0.5 });
    expect(r.status).toBe('partial');
    const done = await h.ok<CommandResult>('send_control', { command_id: r.command_id, key: 'ctrl+c' });
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(130);
    expect(done.signal).toBe('SIGINT');
    expect((await h.exec('echo next')).output).toBe('next');
  });

  test('vim: insert text, esc, :wq saves the file; the screen view shows vim while it runs', async () => {
    const file = join(dir, 'note.txt');
    const r = await h.exec(`vim -u NONE -N ${file}`, { pause_timeout: 2 });
    expect(r.status).toBe('partial');
    const screen = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      view: 'screen',
      pause_timeout: 0.5,
    });
    expect(screen.screen).toBeDefined();
    expect(screen.screen!.alt_screen).toBe(true);
    expect(screen.screen!.rows.some((row) => row.startsWith('~'))).toBe(true);
    expect(screen.screen!.rows.join('\n')).toContain('note.txt');
    await h.ok('send_control', { command_id: r.command_id, key: 'i', pause_timeout: 0.5 });
    await h.ok('respond', {
      command_id: r.command_id,
      text: 'hello from conch',
      enter: false,
      pause_timeout: 0.5,
    });
    const typed = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      view: 'screen',
      pause_timeout: 0.3,
    });
    expect(typed.screen!.rows[0]).toContain('hello from conch');
    await h.ok('send_control', { command_id: r.command_id, key: 'esc', pause_timeout: 0.5 });
    const saved = await h.ok<CommandResult>('respond', {
      command_id: r.command_id,
      text: ':wq',
      pause_timeout: 5,
    });
    expect(saved.status).toBe('completed');
    expect(saved.exit_code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('hello from conch\n');
  });

  test('less is reported as a pager prompt and quits on q', async () => {
    const file = join(dir, 'lines.txt');
    writeFileSync(file, Array.from({ length: 500 }, (_, i) => `row ${i + 1}`).join('\n') + '\n');
    const r = await h.exec(`less ${file}`);
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('awaiting_input');
    expect(r.prompt?.kind).toBe('pager');
    expect(r.output).toContain('row 1');
    const done = await h.ok<CommandResult>('send_control', { command_id: r.command_id, key: 'q' });
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(0);
  });
});
