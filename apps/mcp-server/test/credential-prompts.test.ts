/**
 * Credential prompts that read the controlling terminal through `/dev/tty` (sudo, ssh), end to end: the
 * REAL built server over stdio, a local session and a session over SSH to a REAL OpenSSH server from
 * `@conch/ssh/testing`. Each prompt must be `awaiting_input` with kind `password` (the wait is long, so
 * silence cannot be the reason), `respond {secret: true}` must answer it, and the password must appear in
 * no result and no log line.
 *
 * `sudo` runs as the fixture's user `conchtest` (its password is the fixture's), allowed to run `true`
 * by a sudoers file private to this test file, removed afterwards.
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandResult, type ServerHandle, startServer, type ToolCall } from './harness.js';

let fx: SshFixture;
let sshd: Sshd;
let h: ServerHandle;
let sshSession: string;
/** A sudoers file of this run only (two runs at once each have their own). */
const sudoers = `/etc/sudoers.d/conch-test-${randomBytes(6).toString('hex')}`;
/** Every tool result seen (checked for the password). */
const seen: ToolCall<CommandResult>[] = [];
/** Only the prompt can end these waits: silence would take minutes. */
const LONG = { pause_timeout: 120, total_timeout: 120 };

async function call(name: string, args: Record<string, unknown>): Promise<ToolCall<CommandResult>> {
  const r = await h.call<CommandResult>(name, args, { timeoutMs: 300_000 });
  seen.push(r);
  if (r.isError) throw new Error(`${name} failed: ${r.text}`);
  return r;
}

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  writeFileSync(sudoers, `${fx.user} ALL=(root) /usr/bin/true\n`, { mode: 0o440 });
  execFileSync('visudo', ['-c', '-q', '-f', sudoers]);
  const home = join(fx.dir, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  h = await startServer({ args: ['--log-level', 'debug'], env: { HOME: home, SSH_AUTH_SOCK: '' } });
  const connected = await h.call<{ session_id: string }>('connect_ssh', {
    host: '127.0.0.1',
    port: sshd.port,
    username: fx.user,
    private_key_path: fx.keys.plain,
    use_agent: false,
    host_key_policy: 'accept-new',
    known_hosts_path: join(fx.dir, 'known_hosts_credential_prompts'),
    connect_timeout: 10,
  });
  if (connected.isError) throw new Error(`connect_ssh failed: ${connected.text}`);
  sshSession = connected.structured.session_id;
}, 120_000);

afterAll(async () => {
  rmSync(sudoers, { force: true });
  await h?.close();
  await fx?.dispose();
}, 120_000);

/** An ssh client asking for the test user's password (no keys, no agent, no host-key question). */
const sshCommand = () =>
  [
    'ssh -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR',
    '-o PubkeyAuthentication=no -o PreferredAuthentications=password -o NumberOfPasswordPrompts=1',
    `-p ${sshd.port} ${fx.user}@127.0.0.1 echo ssh-ok`,
  ].join(' ');

const hosts = [
  {
    where: 'locally',
    session: () => ({}),
    // The server runs as root: sudo runs as the test user, on the session's terminal.
    asUser: (command: string) =>
      `setpriv --reuid=${fx.user} --regid=${fx.user} --init-groups sh -c '${command}'`,
  },
  {
    where: 'over SSH',
    session: () => ({ session_id: sshSession }),
    asUser: (command: string) => command,
  },
];

/** Runs `command`, expects a password prompt saying `prompt`, answers it with a secret respond. */
async function answersPasswordPrompt(command: string, session: Record<string, unknown>, prompt: string) {
  const r = await call('execute', { command, ...session, ...LONG });
  expect(r.structured).toMatchObject({
    status: 'partial',
    reason: 'awaiting_input',
    state: 'awaiting_input',
    prompt: { kind: 'password' },
  });
  expect(r.structured.prompt?.text).toContain(prompt);
  const done = await call('respond', {
    command_id: r.structured.command_id,
    text: fx.password,
    secret: true,
    ...LONG,
  });
  expect(done.structured).toMatchObject({ status: 'completed', exit_code: 0 });
  return done.structured.output;
}

describe.each(hosts)('a credential prompt on /dev/tty, $where', ({ session, asUser }) => {
  it('sudo -k; sudo true: awaiting_input with a password prompt, answered by a secret respond', async () => {
    const command = asUser('sudo -k; sudo true && echo sudo-ok');
    expect(await answersPasswordPrompt(command, session(), `password for ${fx.user}`)).toContain('sudo-ok');
  }, 300_000);

  it('ssh with password authentication: awaiting_input with a password prompt, answered by a secret respond', async () => {
    const prompt = `${fx.user}@127.0.0.1's password:`;
    expect(await answersPasswordPrompt(sshCommand(), session(), prompt)).toContain('ssh-ok');
  }, 300_000);
});

describe('afterwards', () => {
  it('the password appears in no result, no page of the logs and no server log line', async () => {
    const answered = seen.filter((r) => r.structured.command_id !== undefined);
    expect(answered.length).toBeGreaterThanOrEqual(8);
    for (const r of answered) {
      const page = await h.call('read_output', { command_id: r.structured.command_id, offset: 0 });
      const raw = await h.call('read_output', { command_id: r.structured.command_id, view: 'raw' });
      for (const text of [JSON.stringify(r.raw), JSON.stringify(page.raw), JSON.stringify(raw.raw)])
        expect(text).not.toContain(fx.password);
    }
    expect(JSON.stringify((await h.call('list_processes', { include_finished: true })).raw)).not.toContain(
      fx.password,
    );
    expect(h.stderr()).toMatch(/tool done tool=respond/);
    expect(h.stderr()).not.toContain(fx.password);
  });

  it('closing the SSH session leaves no per-connection sshd behind', async () => {
    await h.ok('close_session', { session_id: sshSession });
    await waitFor(() => sshd.tree().length === 1, { what: "sshd's per-connection processes to exit" });
  });
});
