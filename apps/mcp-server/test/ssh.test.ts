/**
 * `connect_ssh` end to end: the REAL built server (`dist/bin.cjs`) over stdio, driven by the SDK's Client,
 * against a REAL OpenSSH server from `@conch/ssh/testing` (a test user, client and host keys, sshd on
 * 127.0.0.1). Host-key policies (accept-new, strict, a changed key, ask with and without elicitation),
 * authentication failures, unreachable hosts, the operator's policy restriction, secrets, and cleanup.
 *
 * The servers run with HOME set to an empty directory and no ssh-agent, so that the machine's own
 * ~/.ssh (config, identities, known_hosts) plays no part.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { pidsWithEnv } from '@conch/node/testing';
import { createSshFixture, freePort, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  type CommandResult,
  descendants,
  type ServerHandle,
  type StartOptions,
  startServer,
  type ToolCall,
} from './harness.js';

/** The connect_ssh result as the tests read it. */
interface Connected {
  session_id: string;
  kind: string;
  name: string;
  state: string;
  cwd: string | null;
  shell: string;
  host?: string;
  port?: number;
  username?: string;
  pid?: number;
  banner: string;
  host_key_fingerprint: string;
  host_key_type: string;
  host_key_note?: string;
}

let fx: SshFixture;
let sshd: Sshd;
let home: string;
let fileCounter = 0;
/** Every server started here (closed in afterAll; their stderr is checked for secrets). */
const servers: ServerHandle[] = [];
/** Every tool result seen (checked for secrets). */
const seen: ToolCall[] = [];

/** A fresh known_hosts file with `content`. */
function knownHosts(content = ''): string {
  const path = join(fx.dir, `kh_mcp_${++fileCounter}`);
  writeFileSync(path, content);
  return path;
}

async function start(options: StartOptions = {}): Promise<ServerHandle> {
  const h = await startServer({
    ...options,
    args: ['--log-level', 'debug', ...(options.args ?? [])],
    // No ssh-agent and an empty ~/.ssh: only what a test passes is used.
    env: { HOME: home, SSH_AUTH_SOCK: '', ...options.env },
  });
  servers.push(h);
  return h;
}

/** Calls a tool and remembers the result. */
async function call<T = Record<string, unknown>>(
  h: ServerHandle,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolCall<T>> {
  const r = await h.call<T>(name, args);
  seen.push(r as ToolCall);
  return r;
}

/** connect_ssh arguments for the test user with the plain key under accept-new. */
function keyLogin(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    host: '127.0.0.1',
    port: sshd.port,
    username: fx.user,
    private_key_path: fx.keys.plain,
    use_agent: false,
    host_key_policy: 'accept-new',
    known_hosts_path: knownHosts(),
    connect_timeout: 10,
    ...extra,
  };
}

async function connectOk(h: ServerHandle, args: Record<string, unknown>): Promise<Connected> {
  const r = await call<Connected>(h, 'connect_ssh', args);
  if (r.isError) throw new Error(`connect_ssh failed: ${r.text}`);
  return r.structured;
}

async function exec(h: ServerHandle, sessionId: string, command: string): Promise<CommandResult> {
  const r = await call<CommandResult>(h, 'execute', { command, session_id: sessionId });
  if (r.isError) throw new Error(`execute failed: ${r.text}`);
  return r.structured;
}

let h: ServerHandle;

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  home = join(fx.dir, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  h = await start();
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.close();
  await fx?.dispose();
}, 120_000);

describe('connect_ssh is listed with the parameters of docs/tools.md', () => {
  it('declares every parameter, secrets as writeOnly, and a Session output schema', () => {
    const tool = h.tools.find((t) => t.name === 'connect_ssh');
    expect(tool).toBeDefined();
    const props = tool!.inputSchema.properties as Record<
      string,
      { description?: string; default?: unknown; writeOnly?: boolean; enum?: string[] }
    >;
    expect(Object.keys(props)).toEqual([
      'host',
      'port',
      'username',
      'password',
      'private_key_path',
      'passphrase',
      'use_agent',
      'host_key_policy',
      'known_hosts_path',
      'connect_timeout',
      'keepalive_interval',
      'cols',
      'rows',
      'name',
    ]);
    expect(tool!.inputSchema.required).toEqual(['host']);
    expect(props.port?.default).toBe(22);
    expect(props.use_agent?.default).toBe(true);
    expect(props.connect_timeout?.default).toBe(20);
    expect(props.keepalive_interval?.default).toBe(15);
    expect(props.host_key_policy?.default).toBe('ask');
    expect(props.host_key_policy?.enum).toEqual(['ask', 'accept-new', 'strict', 'insecure']);
    expect(props.password?.writeOnly).toBe(true);
    expect(props.passphrase?.writeOnly).toBe(true);
    expect(tool!.description).toMatch(/exactly like a local one/);
    expect(tool!.description).toMatch(/"lost"/);
    expect(Object.keys(tool!.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining([
        'session_id',
        'kind',
        'banner',
        'host_key_fingerprint',
        'host_key_note',
        'error',
      ]),
    );
    expect(tool!.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
  });
});

describe('the SSH driver is loaded by the first connect_ssh, not at start-up', () => {
  /**
   * True once the server says it loaded the SSH driver (its debug log). ssh2's optional native crypto addon
   * is not built at install, so the process's memory map shows nothing of it.
   */
  const sshLoaded = (server: ServerHandle): boolean => server.stderr().includes('loaded the SSH driver');

  it('answers tools/list and execute without ssh2, then loads it to connect', async () => {
    const fresh = await start();
    expect(fresh.tools.map((t) => t.name)).toContain('connect_ssh');
    expect((await fresh.exec('true')).exit_code).toBe(0);
    const refused = await call(fresh, 'connect_ssh', { host: '127.0.0.1', host_key_policy: 'sometimes' });
    expect(refused.isError).toBe(true);
    expect(sshLoaded(fresh)).toBe(false);
    const connected = await connectOk(fresh, keyLogin());
    expect(connected.kind).toBe('ssh');
    expect(sshLoaded(fresh)).toBe(true);
    await fresh.close();
  });
});

describe('a session over SSH', () => {
  let session: Connected;
  let path: string;

  it('connects with a key under accept-new: a Session with kind ssh, banner and fingerprint', async () => {
    path = knownHosts();
    const r = await call<Connected>(h, 'connect_ssh', keyLogin({ known_hosts_path: path, name: 'remote' }));
    expect(r.isError, r.text).toBe(false);
    session = r.structured;
    expect(session).toMatchObject({
      kind: 'ssh',
      name: 'remote',
      state: 'idle',
      host: '127.0.0.1',
      port: sshd.port,
      username: fx.user,
      host_key_fingerprint: fx.fingerprint('a'),
      host_key_type: 'ssh-ed25519',
    });
    expect(session.session_id).toMatch(/^s_/);
    expect(session.banner).toContain('conch test server');
    expect(session.host_key_note).toMatch(/recorded/);
    expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    expect(r.text).toContain(fx.fingerprint('a'));
    expect(r.text).toContain(session.session_id);
  });

  it('runs commands on that session_id like a local one: user, persistent cwd, exit codes', async () => {
    expect((await exec(h, session.session_id, 'whoami')).output).toBe(fx.user);
    const cd = await exec(h, session.session_id, 'cd /tmp');
    expect(cd).toMatchObject({ status: 'completed', exit_code: 0, cwd: '/tmp' });
    expect((await exec(h, session.session_id, 'pwd')).output).toBe('/tmp');
    expect((await exec(h, session.session_id, 'false')).exit_code).toBe(1);
    expect((await exec(h, session.session_id, "sh -c 'exit 42'")).exit_code).toBe(42);
    const { sessions } = await h.ok<{ sessions: Connected[] }>('list_sessions');
    expect(sessions.find((s) => s.session_id === session.session_id)).toMatchObject({
      kind: 'ssh',
      state: 'idle',
      cwd: '/tmp',
    });
  });

  it('a second connect under strict succeeds: the key was recorded', async () => {
    const second = await connectOk(h, keyLogin({ known_hosts_path: path, host_key_policy: 'strict' }));
    expect(second.host_key_fingerprint).toBe(fx.fingerprint('a'));
    expect(second.host_key_note).toBeUndefined();
    expect((await exec(h, second.session_id, 'echo second')).output).toBe('second');
    await h.ok('close_session', { session_id: second.session_id });
  });

  it('close_session kills the remote shell and its commands, and leaves no local process', async () => {
    const bg = await call<CommandResult>(h, 'execute', {
      command: 'sleep 300',
      session_id: session.session_id,
      background: true,
    });
    expect(bg.structured.status).toBe('partial');
    const remote = pidsWithEnv('CONCH_SESSION_ID', session.session_id);
    expect(remote.length).toBeGreaterThan(0);
    const closed = await h.ok<{ killed_command_ids: string[] }>('close_session', {
      session_id: session.session_id,
    });
    expect(closed.killed_command_ids).toContain(bg.structured.command_id);
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', session.session_id).length === 0, {
      what: 'the remote processes of the session to exit',
    });
    // Every SSH connection of this server is gone: only the listening sshd is left.
    await waitFor(() => sshd.tree().length === 1, { what: "sshd's per-connection processes to exit" });
    // SSH sessions start nothing locally.
    expect(descendants(h.pid)).toEqual([]);
  });
});

describe("what the remote host's ps shows", () => {
  it('no command line on the remote carries a nonce, the environment or a start-up script', async () => {
    const recording = await fx.startSshd({ recordCommands: true });
    const remote = await connectOk(h, keyLogin({ port: recording.port }));
    const nonce = (await exec(h, remote.session_id, 'printf %s "$__conch_n"')).output.trim();
    expect(nonce).toMatch(/^[A-Za-z0-9]{8,64}$/);
    const bg = await call<CommandResult>(h, 'execute', {
      command: 'sleep 300',
      session_id: remote.session_id,
      background: true,
    });
    expect(bg.structured.reason).toBe('background');
    const id = bg.structured.command_id!;
    // An isolated command (the shell is busy) that keeps running while the command lines are read.
    const busy = await call<CommandResult>(h, 'execute', {
      command: 'read y',
      session_id: remote.session_id,
      pause_timeout: 0.5,
    });
    expect(busy.structured.status).toBe('partial');
    const running = await call<CommandResult>(h, 'execute', {
      command: 'sleep 300',
      session_id: remote.session_id,
      pause_timeout: 0.5,
    });
    expect(running.structured).toMatchObject({ status: 'partial', isolated: true });
    for (const commandId of [id, running.structured.command_id!]) {
      await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', commandId).length >= 2, {
        what: `${commandId}'s remote processes`,
      });
      for (const pid of pidsWithEnv('CONCH_COMMAND_ID', commandId)) {
        // Neither the nonce nor conch's wrapper (its `__conch_…` variables) in any argv.
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
        expect(argv, `pid ${pid}`).not.toContain(nonce);
        expect(argv, `pid ${pid}`).not.toMatch(/\]697[35];|__CONCH_NONCE=|__conch/);
      }
    }
    await h.ok('kill_process', { command_id: running.structured.command_id });
    // An isolated command, with the nonce and its wrapper read from its environment, still reports its
    // exit status.
    const isolated = await exec(h, remote.session_id, 'echo isolated-ok; exit 3');
    expect(isolated).toMatchObject({ status: 'completed', exit_code: 3, output: 'isolated-ok' });
    await h.ok('respond', { command_id: busy.structured.command_id, text: '' });
    await h.ok('kill_process', { command_id: id });
    await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', id).length === 0, {
      what: 'the background command to exit',
    });
    // Every command line the server sent (what `ps` shows as the login shell's argv while it starts).
    const commands = recording.commands();
    const starts = commands.filter((c) => /^exec \/bin\/sh '[^']*\/start-[0-9a-f]+\.sh'$/.test(c));
    expect(starts.length, commands.join('\n')).toBeGreaterThanOrEqual(3);
    for (const command of commands) {
      expect(command).not.toContain(nonce);
      expect(command).not.toMatch(/\]6975;|__CONCH_NONCE|export /);
    }
    // The start-up scripts removed themselves.
    const dir = /^exec \/bin\/sh '([^']*)\//.exec(starts[0]!)?.[1];
    expect((await exec(h, remote.session_id, `ls -A ${dir} | grep -c '^start-' || true`)).output).toBe('0');
    await h.ok('close_session', { session_id: remote.session_id });
    await recording.stop();
  });
});

describe('host keys', () => {
  it('refuses a changed key with both fingerprints, under every policy including insecure', async () => {
    const path = knownHosts(`${fx.knownHostsLine(sshd.port, 'b')}\n`);
    for (const policy of ['accept-new', 'strict', 'insecure', 'ask']) {
      const r = await call(h, 'connect_ssh', keyLogin({ known_hosts_path: path, host_key_policy: policy }));
      expect(r.isError, policy).toBe(true);
      expect(r.error?.code, policy).toBe('SSH_HOST_KEY_REJECTED');
      expect(r.error?.message).toContain(fx.fingerprint('a'));
      expect(r.error?.message).toContain(fx.fingerprint('b'));
      expect(r.error?.data).toMatchObject({
        fingerprint: fx.fingerprint('a'),
        known_fingerprints: [fx.fingerprint('b')],
      });
    }
    expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'b')}\n`);
  });

  it('insecure accepts an unknown key without recording it, and says so', async () => {
    const path = knownHosts();
    const s = await connectOk(h, keyLogin({ known_hosts_path: path, host_key_policy: 'insecure' }));
    expect(s.host_key_note).toMatch(/insecure.*WITHOUT verification/);
    expect(readFileSync(path, 'utf8')).toBe('');
    await h.ok('close_session', { session_id: s.session_id });
  });

  it('ask without elicitation support refuses the unknown key with its fingerprint and a hint', async () => {
    const path = knownHosts();
    const r = await call(h, 'connect_ssh', keyLogin({ known_hosts_path: path, host_key_policy: 'ask' }));
    expect(r.error?.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(r.error?.message).toContain(fx.fingerprint('a'));
    expect(r.error?.message).toMatch(/elicitation/);
    expect(r.error?.hint).toMatch(/accept-new/);
    expect(r.error?.data).toMatchObject({ fingerprint: fx.fingerprint('a'), key_type: 'ssh-ed25519' });
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  describe('ask with a client that supports elicitation', () => {
    let e: ServerHandle;
    let answer: ElicitResult = { action: 'decline' };
    const questions: { message: string; requestedSchema: unknown }[] = [];

    beforeAll(async () => {
      e = await start({
        capabilities: { elicitation: {} },
        setupClient: (client) =>
          client.setRequestHandler(ElicitRequestSchema, (request) => {
            const params = request.params as { message: string; requestedSchema: unknown };
            questions.push({ message: params.message, requestedSchema: params.requestedSchema });
            return answer;
          }),
      });
    });

    it('shows host, port, key type and fingerprint; an accepted key connects and is recorded', async () => {
      answer = { action: 'accept', content: { accept: true } };
      const path = knownHosts();
      const s = await connectOk(e, keyLogin({ known_hosts_path: path, host_key_policy: 'ask' }));
      expect(questions).toHaveLength(1);
      const message = questions[0]!.message;
      expect(message).toContain('127.0.0.1');
      expect(message).toContain(String(sshd.port));
      expect(message).toContain('ssh-ed25519');
      expect(message).toContain(fx.fingerprint('a'));
      expect(questions[0]!.requestedSchema).toMatchObject({
        type: 'object',
        properties: { accept: { type: 'boolean' } },
        required: ['accept'],
      });
      expect(s.host_key_note).toMatch(/confirmed/);
      expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
      expect((await exec(e, s.session_id, 'whoami')).output).toBe(fx.user);
      await e.ok('close_session', { session_id: s.session_id });
      // Known now: no second question.
      const again = await connectOk(e, keyLogin({ known_hosts_path: path, host_key_policy: 'ask' }));
      expect(questions).toHaveLength(1);
      await e.ok('close_session', { session_id: again.session_id });
    });

    it('a declined key is SSH_HOST_KEY_REJECTED and nothing is recorded', async () => {
      for (const reply of [
        { action: 'decline' },
        { action: 'cancel' },
        { action: 'accept', content: { accept: false } },
      ] as ElicitResult[]) {
        answer = reply;
        const path = knownHosts();
        const r = await call(e, 'connect_ssh', keyLogin({ known_hosts_path: path, host_key_policy: 'ask' }));
        expect(r.error?.code, JSON.stringify(reply)).toBe('SSH_HOST_KEY_REJECTED');
        expect(r.error?.message).toContain(fx.fingerprint('a'));
        expect(readFileSync(path, 'utf8')).toBe('');
      }
    });

    it('ask is the default policy', async () => {
      answer = { action: 'decline' };
      const before = questions.length;
      const args = keyLogin();
      delete args.host_key_policy;
      const r = await call(e, 'connect_ssh', args);
      expect(r.error?.code).toBe('SSH_HOST_KEY_REJECTED');
      expect(questions.length).toBe(before + 1);
    });
  });
});

describe('failures', () => {
  it('logs in with a password, and a wrong password is SSH_AUTH_FAILED naming the methods tried', async () => {
    const s = await connectOk(h, {
      ...keyLogin({ private_key_path: undefined }),
      password: fx.password,
    });
    expect((await exec(h, s.session_id, 'whoami')).output).toBe(fx.user);
    await h.ok('close_session', { session_id: s.session_id });

    const r = await call(h, 'connect_ssh', {
      ...keyLogin({ private_key_path: undefined }),
      password: `${fx.password}-wrong`,
    });
    expect(r.error?.code).toBe('SSH_AUTH_FAILED');
    expect(r.error?.message).toMatch(/password/);
    expect(r.error?.message).toContain(fx.user);
  });

  it('a closed port is SSH_UNREACHABLE, quickly', async () => {
    const port = await freePort();
    // A connect_timeout no test waits for: the refusal itself, not the time, ends the attempt.
    const r = await call(h, 'connect_ssh', keyLogin({ port, connect_timeout: 600 }));
    expect(r.error?.code).toBe('SSH_UNREACHABLE');
    expect(r.error?.message).toContain(String(port));
    expect(r.error?.message).toContain('connection refused');
  });

  it('bad arguments are INVALID_ARGUMENT, and a malformed password is not echoed', async () => {
    const missing = await call(h, 'connect_ssh', { port: 22 });
    expect(missing.error?.code).toBe('INVALID_ARGUMENT');
    expect(missing.error?.message).toMatch(/host/);
    const policy = await call(h, 'connect_ssh', keyLogin({ host_key_policy: 'yolo' }));
    expect(policy.error?.code).toBe('INVALID_ARGUMENT');
    expect(policy.error?.message).toMatch(/accept-new/);
    const secret = 987_654_321_123;
    const bad = await call(h, 'connect_ssh', keyLogin({ password: secret }));
    expect(bad.error?.code).toBe('INVALID_ARGUMENT');
    expect(bad.text).not.toContain(String(secret));
    expect(JSON.stringify(bad.raw)).not.toContain(String(secret));
    const key = await call(h, 'connect_ssh', keyLogin({ private_key_path: join(fx.dir, 'no-such-key') }));
    expect(key.error?.code).toBe('INVALID_ARGUMENT');
  });

  it('an encrypted key needs its passphrase, which is never returned', async () => {
    const s = await connectOk(
      h,
      keyLogin({ private_key_path: fx.keys.encrypted, passphrase: fx.keys.passphrase }),
    );
    await h.ok('close_session', { session_id: s.session_id });
    const r = await call(
      h,
      'connect_ssh',
      keyLogin({ private_key_path: fx.keys.encrypted, passphrase: 'nope-x' }),
    );
    expect(r.error?.code).toBe('SSH_AUTH_FAILED');
  });
});

describe('the operator restricts the host key policies', () => {
  let strict: ServerHandle;

  beforeAll(async () => {
    strict = await start({ args: ['--ssh-host-key-policies', 'strict'] });
  });

  it('--ssh-host-key-policies strict forbids insecure and accept-new (INVALID_ARGUMENT), and says so', async () => {
    const tool = strict.tools.find((t) => t.name === 'connect_ssh')!;
    expect(tool.description).toMatch(/forbidden: ask, accept-new, insecure/);
    for (const policy of ['insecure', 'accept-new', 'ask']) {
      const r = await call(strict, 'connect_ssh', keyLogin({ host_key_policy: policy }));
      expect(r.error?.code, policy).toBe('INVALID_ARGUMENT');
      expect(r.error?.message).toContain(`"${policy}" is forbidden`);
      expect(r.error?.hint).toMatch(/strict/);
    }
  });

  it('without a policy the call gets strict: an unknown key is refused, a known one accepted', async () => {
    const args = keyLogin();
    delete args.host_key_policy;
    const r = await call(strict, 'connect_ssh', args);
    expect(r.error?.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(r.error?.hint).toMatch(/does not allow "accept-new"/);
    const known = knownHosts(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    const s = await connectOk(strict, { ...args, known_hosts_path: known });
    await strict.ok('close_session', { session_id: s.session_id });
  });

  it('a config file can restrict the policies and choose the default', async () => {
    const config = join(fx.dir, 'conch.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        ssh: { allowed_host_key_policies: ['strict', 'accept-new'], default_host_key_policy: 'accept-new' },
      }),
    );
    const c = await start({ args: ['--config', config] });
    const tool = c.tools.find((t) => t.name === 'connect_ssh')!;
    expect(
      (tool.inputSchema.properties as Record<string, { default?: unknown }>).host_key_policy?.default,
    ).toBe('accept-new');
    const args = keyLogin();
    delete args.host_key_policy;
    const s = await connectOk(c, args);
    expect(s.host_key_note).toMatch(/accept-new/);
    await c.ok('close_session', { session_id: s.session_id });
    expect((await call(c, 'connect_ssh', keyLogin({ host_key_policy: 'insecure' }))).error?.code).toBe(
      'INVALID_ARGUMENT',
    );
    await c.close();
  });
});

describe('a session that cannot be opened', () => {
  it('LIMIT_REACHED leaves no SSH connection behind', async () => {
    const one = await start({ args: ['--max-sessions', '1'] });
    const first = await connectOk(one, keyLogin());
    await waitFor(() => sshd.tree().length > 1, { what: 'the first connection' });
    const before = sshd.tree().length;
    const r = await call(one, 'connect_ssh', keyLogin());
    expect(r.error?.code).toBe('LIMIT_REACHED');
    expect(r.error?.message).toMatch(/1 of 1 sessions/);
    await waitFor(() => sshd.tree().length <= before, { what: 'no extra connection' });
    await one.ok('close_session', { session_id: first.session_id });
    await one.close();
  });
});

describe('bad operator settings stop the server at start (exit 2)', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], { input: '', encoding: 'utf8', timeout: 20_000 });

  it('an unknown policy in --ssh-host-key-policies', () => {
    const r = run('--ssh-host-key-policies', 'strict,yolo');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown host key policy "yolo"; valid: ask, accept-new, strict, insecure/);
  });

  it('a default policy that is not allowed, or an unknown key in the ssh section', () => {
    const config = join(fx.dir, 'bad.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        ssh: { allowed_host_key_policies: ['strict'], default_host_key_policy: 'accept-new' },
      }),
    );
    const r = run('--config', config);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/default_host_key_policy "accept-new" is not among the allowed/);
    writeFileSync(config, JSON.stringify({ ssh: { policies: ['strict'] } }));
    const u = run('--config', config);
    expect(u.status).toBe(2);
    expect(u.stderr).toMatch(
      /unknown key "policies" \(valid keys: allowed_host_key_policies, default_host_key_policy\)/,
    );
  });
});

describe('secrets and cleanup', () => {
  it('the password and passphrase never appear in stderr or any result', async () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const r of seen) {
      const all = JSON.stringify(r.raw);
      expect(all).not.toContain(fx.password);
      expect(all).not.toContain(fx.keys.passphrase);
    }
    for (const server of servers) {
      const log = server.stderr();
      expect(log).toMatch(/tool done tool=connect_ssh/);
      expect(log).not.toContain(fx.password);
      expect(log).not.toContain(fx.keys.passphrase);
    }
  });

  it('no SSH connection is left open once every session is closed', async () => {
    for (const server of servers) {
      const { sessions } = await server.ok<{ sessions: Connected[] }>('list_sessions').catch(() => ({
        sessions: [] as Connected[],
      }));
      for (const s of sessions) await server.ok('close_session', { session_id: s.session_id });
    }
    await waitFor(() => sshd.tree().length === 1, { what: "sshd's per-connection processes to exit" });
  });
});
