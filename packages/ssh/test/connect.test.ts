/**
 * `connectSsh` against a real OpenSSH server: every way in (key, passphrase key, password, agent, config
 * alias, ProxyJump), every host-key policy, and every way a connection is refused.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ConchError } from '@conch/core';
import { waitFor } from '@conch/core/testing';
import { createSshFixture, freePort, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectSshOptions, connectSsh, type SshConnection } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture;
let sshd: Sshd;
let fileCounter = 0;

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
});

afterAll(async () => {
  await fx?.dispose();
});

function knownHostsFile(content = ''): string {
  const path = join(fx.dir, `kh_connect_${++fileCounter}`);
  writeFileSync(path, content);
  return path;
}

/** Connects, checks the remote user, and disconnects. */
async function loginWorks(conn: SshConnection): Promise<void> {
  try {
    const r = await conn.driver.exec('id -un');
    expect(r.stdout.trim()).toBe(fx.user);
    expect(r.exitCode).toBe(0);
  } finally {
    await conn.driver.dispose();
  }
}

async function failure(promise: Promise<unknown>): Promise<ConchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ConchError.is(error)) throw new Error(`expected a ConchError, got ${inspect(error)}`);
  return error;
}

/** Auth lines in the sshd log (to prove that no credential was sent). */
function authLines(server: Sshd): number {
  return server
    .log()
    .split('\n')
    .filter((l) => /Accepted|Failed|Invalid user|Postponed/.test(l)).length;
}

describe('logins', () => {
  it('logs in with a private key and reports the host key and the recorded entry', async () => {
    const conn = await connectTo(fx, sshd);
    expect(conn.hostKeyFingerprint).toBe(fx.fingerprint('a'));
    expect(conn.hostKeyType).toBe('ssh-ed25519');
    expect(conn).toMatchObject({
      username: fx.user,
      host: '127.0.0.1',
      hostName: '127.0.0.1',
      port: sshd.port,
      via: [],
    });
    expect(conn.policyNote).toMatch(/recorded new ssh-ed25519 key/);
    expect(conn.banner).toBe('conch test server: authorised use only\n');
    await loginWorks(conn);
  });

  it('accepts user@host:port in host', async () => {
    const conn = await connectTo(fx, sshd, {
      host: `${fx.user}@127.0.0.1:${sshd.port}`,
      port: undefined,
      username: undefined,
    });
    expect(conn).toMatchObject({ host: '127.0.0.1', port: sshd.port, username: fx.user });
    await loginWorks(conn);
  });

  it('logs in with a passphrase-protected key, and never shows the passphrase', async () => {
    const conn = await connectTo(fx, sshd, {
      privateKeyPath: fx.keys.encrypted,
      passphrase: fx.keys.passphrase,
    });
    expect(inspect(conn, { depth: 6, showHidden: true })).not.toContain(fx.keys.passphrase);
    await loginWorks(conn);
  });

  it('refuses a wrong passphrase as an authentication failure without echoing it', async () => {
    const error = await failure(
      connectTo(fx, sshd, { privateKeyPath: fx.keys.encrypted, passphrase: 'not-the-passphrase' }),
    );
    expect(error.code).toBe('SSH_AUTH_FAILED');
    expect(error.message).toContain('passphrase does not decrypt');
    expect(JSON.stringify(error.toJSON())).not.toContain('not-the-passphrase');
  });

  it('logs in with a password, and keeps the password nowhere it can be seen', async () => {
    const conn = await connectTo(fx, sshd, { privateKeyPath: undefined, password: fx.password });
    expect(inspect(conn, { depth: 8, showHidden: true })).not.toContain(fx.password);
    expect(JSON.stringify({ ...conn, driver: undefined })).not.toContain(fx.password);
    await loginWorks(conn);
  });

  it('refuses a wrong password with SSH_AUTH_FAILED naming the methods tried, not the secret', async () => {
    const error = await failure(
      connectTo(fx, sshd, { privateKeyPath: undefined, password: 'wrong-password-123' }),
    );
    expect(error.code).toBe('SSH_AUTH_FAILED');
    expect(error.message).toContain('Tried: password');
    expect(error.message).toContain(`${fx.user}@127.0.0.1`);
    expect(JSON.stringify(error.toJSON())).not.toContain('wrong-password-123');
  });

  it('logs in through the ssh-agent', async () => {
    const conn = await connectTo(fx, sshd, {
      privateKeyPath: undefined,
      useAgent: true,
      agentSocket: fx.agentSocket,
    });
    await loginWorks(conn);
  });

  it('names every method tried when all of them fail', async () => {
    const error = await failure(
      connectTo(fx, sshd, {
        username: 'nobody-here',
        useAgent: true,
        agentSocket: fx.agentSocket,
        password: 'x',
      }),
    );
    expect(error.code).toBe('SSH_AUTH_FAILED');
    expect(error.message).toContain(`publickey (${fx.keys.plain})`);
    expect(error.message).toContain('publickey (ssh-agent)');
    expect(error.message).toContain('password');
    expect(error.data).toMatchObject({ username: 'nobody-here' });
  });

  it('resolves an alias from the ssh config: HostName, User, Port, IdentityFile', async () => {
    const config = join(fx.dir, 'ssh_config_alias');
    writeFileSync(
      config,
      [
        'Host build-box',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  User ${fx.user}`,
        `  IdentityFile ${fx.keys.plain}`,
        'Host *',
        '  User someone-else',
        '',
      ].join('\n'),
    );
    const conn = await connectSsh({
      host: 'build-box',
      configPath: config,
      useAgent: false,
      hostKeyPolicy: 'accept-new',
      knownHostsPath: knownHostsFile(),
      globalKnownHostsPath: null,
    });
    expect(conn).toMatchObject({
      host: 'build-box',
      hostName: '127.0.0.1',
      port: sshd.port,
      username: fx.user,
    });
    await loginWorks(conn);
  });

  it('goes through a ProxyJump host, and is lost when the jump host goes away', async () => {
    const jump = await fx.startSshd();
    const config = join(fx.dir, 'ssh_config_jump');
    writeFileSync(
      config,
      [
        'Host jump',
        '  HostName 127.0.0.1',
        `  Port ${jump.port}`,
        `  User ${fx.user}`,
        `  IdentityFile ${fx.keys.plain}`,
        'Host behind',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  User ${fx.user}`,
        `  IdentityFile ${fx.keys.plain}`,
        '  ProxyJump jump',
        '',
      ].join('\n'),
    );
    const conn = await connectSsh({
      host: 'behind',
      configPath: config,
      useAgent: false,
      hostKeyPolicy: 'accept-new',
      knownHostsPath: knownHostsFile(),
      globalKnownHostsPath: null,
      keepaliveIntervalS: 1,
    });
    expect(conn.via).toEqual([`${fx.user}@127.0.0.1:${jump.port}`]);
    expect(conn.port).toBe(sshd.port);
    expect((await conn.driver.exec('echo through')).stdout.trim()).toBe('through');
    // The jump host forwarded the connection: its log says so.
    expect(jump.log()).toMatch(new RegExp(`Accepted publickey for ${fx.user}`));
    const lost = new Promise<string>((resolve) => conn.driver.onLost(resolve));
    await jump.stop();
    expect(await lost).toMatch(/lost|closed/);
    expect(conn.driver.lost).toBe(true);
    await conn.driver.dispose();
  });
});

describe('host keys', () => {
  it('accept-new records an unknown key; strict then finds it', async () => {
    const path = knownHostsFile();
    const first = await connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'accept-new' });
    expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    await first.driver.dispose();
    const second = await connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'strict' });
    expect(second.policyNote).toBeUndefined();
    await loginWorks(second);
  });

  it('strict refuses an unknown key with its fingerprint, before any credential is sent', async () => {
    const before = authLines(sshd);
    const error = await failure(connectTo(fx, sshd, { hostKeyPolicy: 'strict', password: fx.password }));
    expect(error.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(error.message).toContain(fx.fingerprint('a'));
    expect(error.hint).toMatch(/accept-new/);
    expect(authLines(sshd)).toBe(before);
  });

  it('refuses a changed key with both fingerprints under every policy, insecure included', async () => {
    const path = knownHostsFile(`${fx.knownHostsLine(sshd.port, 'b')}\n`);
    const before = authLines(sshd);
    for (const hostKeyPolicy of ['ask', 'accept-new', 'strict', 'insecure'] as const) {
      const error = await failure(
        connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy, confirmHostKey: async () => true }),
      );
      expect(error.code).toBe('SSH_HOST_KEY_REJECTED');
      expect(error.message).toContain('HOST KEY CHANGED');
      expect(error.message).toContain(fx.fingerprint('a'));
      expect(error.message).toContain(fx.fingerprint('b'));
      expect(error.data).toMatchObject({
        fingerprint: fx.fingerprint('a'),
        known_fingerprints: [fx.fingerprint('b')],
      });
    }
    expect(authLines(sshd)).toBe(before);
    expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'b')}\n`);
  });

  it('refuses a server whose key changed (another sshd on the same port)', async () => {
    const path = knownHostsFile();
    const original = await fx.startSshd({ hostKey: 'a' });
    await (await connectTo(fx, original, { knownHostsPath: path })).driver.dispose();
    const port = original.port;
    await original.stop();
    const impostor = await fx.startSshd({ hostKey: 'b', port });
    const error = await failure(
      connectTo(fx, impostor, { knownHostsPath: path, hostKeyPolicy: 'accept-new' }),
    );
    expect(error.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(error.message).toContain(fx.fingerprint('a'));
    expect(error.message).toContain(fx.fingerprint('b'));
    await impostor.stop();
  });

  it('insecure accepts an unknown key without recording it, and says so', async () => {
    const path = knownHostsFile();
    const conn = await connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'insecure' });
    expect(conn.policyNote).toMatch(/insecure/);
    expect(conn.policyNote).toMatch(/WITHOUT verification/);
    expect(conn.policyNote).toContain(fx.fingerprint('a'));
    expect(readFileSync(path, 'utf8')).toBe('');
    await loginWorks(conn);
  });

  it('insecure still accepts a known key silently', async () => {
    const path = knownHostsFile(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    const conn = await connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'insecure' });
    expect(conn.policyNote).toBeUndefined();
    await loginWorks(conn);
  });

  it('insecure refuses a @revoked key', async () => {
    const path = knownHostsFile(`@revoked ${fx.knownHostsLine(sshd.port, 'a')}\n`);
    const error = await failure(connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'insecure' }));
    expect(error.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(error.message).toContain('@revoked');
  });

  it('understands hashed known_hosts entries (ssh-keygen -H)', async () => {
    const good = knownHostsFile(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', good], { stdio: 'ignore' });
    expect(readFileSync(good, 'utf8')).toMatch(/^\|1\|/);
    await loginWorks(await connectTo(fx, sshd, { knownHostsPath: good, hostKeyPolicy: 'strict' }));
    const bad = knownHostsFile(`${fx.knownHostsLine(sshd.port, 'b')}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', bad], { stdio: 'ignore' });
    const error = await failure(connectTo(fx, sshd, { knownHostsPath: bad, hostKeyPolicy: 'strict' }));
    expect(error.message).toContain('HOST KEY CHANGED');
  });

  it('ask: confirmHostKey decides; an accepted key is recorded; without a way to ask it refuses', async () => {
    const path = knownHostsFile();
    const questions: unknown[] = [];
    const declined = await failure(
      connectTo(fx, sshd, {
        knownHostsPath: path,
        hostKeyPolicy: 'ask',
        confirmHostKey: async (q) => {
          questions.push(q);
          return false;
        },
      }),
    );
    expect(declined.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(questions).toEqual([
      {
        host: '127.0.0.1',
        port: sshd.port,
        fingerprint: fx.fingerprint('a'),
        keyType: 'ssh-ed25519',
        jumpHost: false,
      },
    ]);
    expect(readFileSync(path, 'utf8')).toBe('');

    const silent = await failure(connectTo(fx, sshd, { knownHostsPath: path, hostKeyPolicy: 'ask' }));
    expect(silent.code).toBe('SSH_HOST_KEY_REJECTED');
    expect(silent.message).toContain(fx.fingerprint('a'));
    expect(silent.hint).toMatch(/accept-new/);

    // A slow person does not run into connect_timeout.
    const accepted = await connectTo(fx, sshd, {
      knownHostsPath: path,
      hostKeyPolicy: 'ask',
      connectTimeoutS: 0.5,
      confirmHostKey: () => new Promise((resolve) => setTimeout(() => resolve(true), 1200)),
    });
    expect(accepted.policyNote).toMatch(/confirmed by the user/);
    expect(readFileSync(path, 'utf8')).toBe(`${fx.knownHostsLine(sshd.port, 'a')}\n`);
    await loginWorks(accepted);
  });

  it('lets the operator forbid weak policies', async () => {
    const error = await failure(
      connectTo(fx, sshd, { hostKeyPolicy: 'insecure', allowedPolicies: ['ask', 'strict'] }),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('"insecure" is forbidden');
    expect(error.message).toContain('accept-new');
    expect(error.hint).toContain('ask, strict');
  });
});

describe('failures', () => {
  it('an unreachable port is SSH_UNREACHABLE at once', async () => {
    const port = await freePort();
    // A connect_timeout no test waits for: the refusal itself, not the time, ends the attempt.
    const error = await failure(
      connectSsh({
        host: '127.0.0.1',
        port,
        configPath: null,
        hostKeyPolicy: 'strict',
        connectTimeoutS: 600,
      }),
    );
    expect(error.code).toBe('SSH_UNREACHABLE');
    expect(error.message).toContain('connection refused');
  });

  it('a host that accepts TCP but never speaks is SSH_UNREACHABLE within connect_timeout', async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const started = Date.now();
      const error = await failure(
        connectSsh({ host: '127.0.0.1', port, configPath: null, connectTimeoutS: 1 }),
      );
      expect(error.code).toBe('SSH_UNREACHABLE');
      expect(error.message).toContain('within connect_timeout (1 s)');
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('rejects bad arguments with the valid choices', async () => {
    const bad: Array<[Partial<ConnectSshOptions>, RegExp]> = [
      [{ port: 70000 }, /Invalid port/],
      [{ hostKeyPolicy: 'trust-me' as never }, /Valid policies: ask, accept-new, strict, insecure/],
      [{ privateKeyPath: join(fx.dir, 'missing-key') }, /cannot read/],
      [{ connectTimeoutS: -1 }, /connect_timeout/],
    ];
    for (const [options, message] of bad) {
      const error = await failure(connectTo(fx, sshd, options));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toMatch(message);
    }
    const host = await failure(connectSsh({ host: '' }));
    expect(host.code).toBe('INVALID_ARGUMENT');
  });

  it('leaves no connection behind after a failure', async () => {
    await failure(connectTo(fx, sshd, { privateKeyPath: undefined, password: 'nope' }));
    // Only the listener (and connections still closing) remain under sshd.
    await waitFor(() => sshd.tree().length === 1, {
      timeoutMs: 10_000,
      what: 'per-connection sshd processes to exit',
    });
  });
});
