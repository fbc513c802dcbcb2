/**
 * `--profile interminal` end to end: the REAL built server over stdio, interminal's tool names and
 * arguments, its `{status, output, exit_code}` / `{status, output, command_id}` results, and its SSH
 * sessions with host keys verified (conch's connect_ssh) against a REAL sshd from `@conch/ssh/testing`.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ServerHandle, startServer } from './harness.js';

let fx: SshFixture;
let sshd: Sshd;
let h: ServerHandle;
let n = 0;

function knownHosts(content = ''): string {
  const path = join(fx.dir, `kh_interminal_${++n}`);
  writeFileSync(path, content);
  return path;
}

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  const home = join(fx.dir, 'home-interminal');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  h = await startServer({ args: ['--profile', 'interminal'], env: { HOME: home, SSH_AUTH_SOCK: '' } });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await fx?.dispose();
}, 120_000);

interface Result {
  status: string;
  output: string;
  exit_code?: number | null;
  command_id?: string;
}

describe('--profile interminal', () => {
  test('tools/list is exactly interminal’s tools, with its parameters and defaults', () => {
    expect(h.tools.map((t) => t.name).sort()).toEqual(
      [
        'connect_ssh',
        'create_local',
        'execute',
        'read_output',
        'respond',
        'send_control',
        'list_sessions',
        'disconnect',
      ].sort(),
    );
    const props = (name: string) =>
      h.tools.find((t) => t.name === name)?.inputSchema.properties as Record<string, { default?: unknown }>;
    expect(Object.keys(props('execute'))).toEqual([
      'command',
      'session_id',
      'shell',
      'pause_timeout',
      'total_timeout',
    ]);
    expect(props('execute').pause_timeout?.default).toBe(9);
    expect(props('execute').total_timeout?.default).toBe(20);
    expect(props('send_control').signal?.default).toBe('ctrl+c');
    expect(Object.keys(props('disconnect'))).toEqual(['session_id']);
  });

  test('execute: {status, output, exit_code} when completed, {status, output, command_id} when partial', async () => {
    const done = await h.call<Result>('execute', { command: 'echo hi' });
    expect(done.structured).toEqual({ status: 'completed', output: 'hi', exit_code: 0 });
    expect(JSON.parse(done.text)).toEqual(done.structured);
    const asking = await h.ok<Result>('execute', { command: `read -p 'Continue? ' x; echo "got $x"` });
    expect(asking.status).toBe('partial');
    expect(asking.command_id).toMatch(/^c_/);
    expect(asking.output).toContain('Continue?');
    const answered = await h.ok<Result>('respond', { command_id: asking.command_id, text: 'y' });
    expect(answered).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(answered.output).toContain('got y');
  });

  test('send_control presses ctrl+c by default; read_output continues a partial command', async () => {
    const slow = await h.ok<Result>('execute', { command: 'echo start; sleep 60', pause_timeout: 0.5 });
    expect(slow.status).toBe('partial');
    const more = await h.ok<Result>('read_output', { command_id: slow.command_id, pause_timeout: 0.2 });
    expect(more.status).toBe('partial');
    const stopped = await h.ok<Result>('send_control', { command_id: slow.command_id });
    expect(stopped.status).toBe('completed');
    expect(stopped.exit_code).toBe(130);
  });

  test('a local session with another shell, listed and disconnected', async () => {
    const s = await h.ok<{ session_id: string; shell: string }>('create_local', {
      shell: '/bin/sh',
      name: 'plain',
    });
    const r = await h.ok<Result>('execute', { command: 'echo $0', session_id: s.session_id });
    expect(r.output).toContain('sh');
    const listed = await h.ok<{ sessions: { session_id: string }[] }>('list_sessions', {});
    expect(listed.sessions.map((x) => x.session_id)).toContain(s.session_id);
    expect(await h.ok('disconnect', { session_id: s.session_id })).toMatchObject({
      status: 'disconnected',
      session_id: s.session_id,
    });
  });

  test('SSH host keys are verified: an unknown key is refused under strict, a known one connects', async () => {
    const base = {
      host: '127.0.0.1',
      port: sshd.port,
      username: fx.user,
      private_key_path: fx.keys.plain,
      use_agent: false,
      connect_timeout: 10,
    };
    const refused = await h.call('connect_ssh', {
      ...base,
      host_key_policy: 'strict',
      known_hosts_path: knownHosts(),
    });
    expect(refused.isError).toBe(true);
    expect(refused.error?.code).toBe('SSH_HOST_KEY_REJECTED');
    // With no way to ask the person (no elicitation), the default policy refuses an unknown key too.
    const asked = await h.call('connect_ssh', { ...base, known_hosts_path: knownHosts() });
    expect(asked.error?.code).toBe('SSH_HOST_KEY_REJECTED');
    const kh = knownHosts();
    const s = await h.ok<{ session_id: string }>('connect_ssh', {
      ...base,
      host_key_policy: 'accept-new',
      known_hosts_path: kh,
    });
    const who = await h.ok<Result>('execute', { command: 'whoami', session_id: s.session_id });
    expect(who).toEqual({ status: 'completed', output: fx.user, exit_code: 0 });
    expect(await h.ok('disconnect', { session_id: s.session_id })).toMatchObject({ status: 'disconnected' });
    // The key recorded is now required: strict connects.
    const again = await h.ok<{ session_id: string }>('connect_ssh', {
      ...base,
      host_key_policy: 'strict',
      known_hosts_path: kh,
    });
    await h.ok('disconnect', { session_id: again.session_id });
  });
});
