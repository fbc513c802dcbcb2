/**
 * `connect_ssh` in process (the service's connectSsh through the MCP face), with `connectSsh` replaced by a fake that returns the core's FakeDriver (a
 * scripted shell) as the SSH driver: the mapping of parameters to `connectSsh` options, the operator's
 * policies, elicitation, the session limit, disposal of a driver whose session could not open, and the
 * redaction of secret parameters. The real thing (real server, real sshd) is test/ssh.test.ts.
 */

import { ConchError, createRealClock, ErrorCode, PARAMETER_RULES } from '@conch/core';
import { FakeDriver } from '@conch/core/testing';
import { ConchService, cleanBanner, hostKeyQuestionText, type SshServiceOptions } from '@conch/service';
import type { ConnectSshOptions, HostKeyQuestion, SshConnection, SshDriver } from '@conch/ssh';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CallToolResult,
  type ClientCapabilities,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, test } from 'vitest';
import * as z from 'zod';
import { createConchServer } from './server.js';
import { sshTools } from './ssh-tools.js';
import { invalidArgumentFromZod } from './tool-kit.js';

const clock = createRealClock();
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A FakeDriver (a scripted shell; `failOpen` makes its shell fail to start) that counts disposals. */
class CountingDriver extends FakeDriver {
  disposed = 0;
  override async dispose(): Promise<void> {
    this.disposed++;
    await super.dispose();
  }
}

interface Setup {
  client: Client;
  calls: ConnectSshOptions[];
  drivers: CountingDriver[];
  call(args: Record<string, unknown>): Promise<CallToolResult>;
}

async function setup(
  options: Omit<SshServiceOptions, 'connect'> & {
    maxSessions?: number;
    capabilities?: ClientCapabilities;
    failOpen?: boolean;
    onConnect?: (options: ConnectSshOptions) => Promise<void>;
  } = {},
): Promise<Setup> {
  const calls: ConnectSshOptions[] = [];
  const drivers: CountingDriver[] = [];
  const connect = async (o: ConnectSshOptions): Promise<SshConnection> => {
    calls.push(o);
    await options.onConnect?.(o);
    const driver = new CountingDriver({ clock, kind: 'ssh' });
    if (options.failOpen)
      driver.failOpen = new ConchError(ErrorCode.INTERNAL, 'the remote shell did not start');
    drivers.push(driver);
    return {
      driver: driver as unknown as SshDriver,
      banner: 'Welcome\x1b[31m!\x1b[0m\r\n',
      hostKeyFingerprint: 'SHA256:abc',
      hostKeyType: 'ssh-ed25519',
      username: o.username ?? 'me',
      host: o.host,
      hostName: o.host,
      port: o.port ?? 22,
      via: [],
      policyNote: 'host_key_policy "accept-new": recorded new ssh-ed25519 key SHA256:abc.',
    };
  };
  const service = new ConchService({
    engine: {
      clock,
      ...(options.maxSessions === undefined ? {} : { limits: { maxSessions: options.maxSessions } }),
    },
    ssh: {
      ...(options.allowedPolicies ? { allowedPolicies: options.allowedPolicies } : {}),
      ...(options.defaultPolicy ? { defaultPolicy: options.defaultPolicy } : {}),
      connect,
    },
  });
  const conch = createConchServer({ service, extraTools: [sshTools()] });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await conch.server.connect(serverSide);
  const client = new Client(
    { name: 'unit', version: '0' },
    options.capabilities ? { capabilities: options.capabilities } : undefined,
  );
  await client.connect(clientSide);
  await client.listTools();
  closers.push(async () => {
    await client.close();
    await conch.close();
  });
  return {
    client,
    calls,
    drivers,
    call: async (args) => (await client.callTool({ name: 'connect_ssh', arguments: args })) as CallToolResult,
  };
}

const errorOf = (r: CallToolResult) =>
  (r.structuredContent as { error?: { code: string; message: string; hint?: string } }).error;

describe('connect_ssh (in process, fake connection)', () => {
  test('maps every parameter to connectSsh and opens an ssh session on the driver', async () => {
    const s = await setup();
    const r = await s.call({
      host: 'box',
      port: 2222,
      username: 'deploy',
      password: 'pw-secret',
      private_key_path: '~/.ssh/k',
      passphrase: 'pp-secret',
      use_agent: false,
      host_key_policy: 'accept-new',
      known_hosts_path: '/tmp/kh',
      connect_timeout: 5,
      keepalive_interval: 0,
      cols: 100,
      rows: 30,
      name: 'prod',
    });
    expect(r.isError).toBeFalsy();
    expect(s.calls[0]).toMatchObject({
      host: 'box',
      port: 2222,
      username: 'deploy',
      password: 'pw-secret',
      privateKeyPath: '~/.ssh/k',
      passphrase: 'pp-secret',
      useAgent: false,
      hostKeyPolicy: 'accept-new',
      knownHostsPath: '/tmp/kh',
      connectTimeoutS: 5,
      keepaliveIntervalS: 0,
      allowedPolicies: ['ask', 'accept-new', 'strict', 'insecure'],
    });
    expect(s.calls[0]?.confirmHostKey).toBeUndefined();
    expect(r.structuredContent).toMatchObject({
      kind: 'ssh',
      name: 'prod',
      host: 'box',
      port: 2222,
      username: 'deploy',
      state: 'idle',
      banner: 'Welcome!\n',
      host_key_fingerprint: 'SHA256:abc',
      host_key_type: 'ssh-ed25519',
      host_key_note: expect.stringMatching(/recorded/),
    });
    const text = (r.content[0] as { text: string }).text;
    expect(text).toMatch(/^Connected: s_\w+ \(prod\) · ssh deploy@box:2222 · idle/);
    expect(text).toContain('Host key: ssh-ed25519 SHA256:abc');
    expect(JSON.stringify(r)).not.toMatch(/pw-secret|pp-secret/);
  });

  test("defaults: what the call leaves out is not sent (connectSsh applies the one rule of each), the policy is the operator's ask", async () => {
    const s = await setup();
    await s.call({ host: 'box' });
    const o = s.calls[0]!;
    // Port and username come from the ssh config; agent, timeouts from PARAMETER_RULES, applied by connectSsh.
    for (const key of ['port', 'username', 'useAgent', 'connectTimeoutS', 'keepaliveIntervalS'] as const) {
      expect(o[key], key).toBeUndefined();
    }
    expect(o).toMatchObject({ hostKeyPolicy: 'ask' });
    // The listing shows the defaults that connectSsh applies.
    const tool = (await s.client.listTools()).tools.find((t) => t.name === 'connect_ssh')!;
    const props = tool.inputSchema.properties as Record<string, { default?: unknown }>;
    expect(props.use_agent?.default).toBe(PARAMETER_RULES.use_agent.default);
    expect(props.connect_timeout?.default).toBe(20);
    expect(props.keepalive_interval?.default).toBe(15);
  });

  test("the operator's policies: forbidden ones are passed on, the default is theirs", async () => {
    const s = await setup({ allowedPolicies: ['strict', 'accept-new'], defaultPolicy: 'accept-new' });
    await s.call({ host: 'box' });
    expect(s.calls[0]).toMatchObject({
      hostKeyPolicy: 'accept-new',
      allowedPolicies: ['accept-new', 'strict'],
    });
    const tool = (await s.client.listTools()).tools.find((t) => t.name === 'connect_ssh')!;
    expect(tool.description).toContain('this server allows accept-new, strict (forbidden: ask, insecure)');
  });

  test('ask uses elicitation when the client declared it; only an explicit accept trusts the key', async () => {
    let answer: unknown = { action: 'accept', content: { accept: true } };
    const messages: string[] = [];
    const verdicts: boolean[] = [];
    const question: HostKeyQuestion = {
      host: 'box',
      port: 2222,
      fingerprint: 'SHA256:xyz',
      keyType: 'ssh-ed25519',
      jumpHost: false,
    };
    const s = await setup({
      capabilities: { elicitation: {} },
      onConnect: async (o) => {
        verdicts.push(await o.confirmHostKey!(question));
      },
    });
    s.client.setRequestHandler(ElicitRequestSchema, (request) => {
      messages.push(request.params.message);
      return answer as never;
    });
    await s.call({ host: 'box', port: 2222, host_key_policy: 'ask' });
    answer = { action: 'decline' };
    await s.call({ host: 'box', port: 2222, host_key_policy: 'ask' });
    answer = { action: 'accept', content: { accept: false } };
    await s.call({ host: 'box', port: 2222, host_key_policy: 'ask' });
    expect(verdicts).toEqual([true, false, false]);
    expect(messages[0]).toContain('SHA256:xyz');
    expect(messages[0]).toContain('Port: 2222');
    expect(messages[0]).toContain('Key type: ssh-ed25519');
    // Other policies never ask.
    await s.call({ host: 'box', host_key_policy: 'strict' });
    expect(s.calls.at(-1)?.confirmHostKey).toBeUndefined();
  });

  test('a session that cannot open disposes its driver; the limit is checked before connecting', async () => {
    const failing = await setup({ failOpen: true });
    const r = await failing.call({ host: 'box' });
    expect(r.isError).toBe(true);
    expect(failing.drivers[0]?.disposed).toBe(1);

    const limited = await setup({ maxSessions: 1 });
    expect((await limited.call({ host: 'box' })).isError).toBeFalsy();
    const refused = await limited.call({ host: 'box' });
    expect(errorOf(refused)?.code).toBe('LIMIT_REACHED');
    expect(limited.calls).toHaveLength(1);
  });

  test('a refused unknown key gets a hint that fits what the operator allows', async () => {
    const unknownKey = () => {
      throw new ConchError(
        ErrorCode.SSH_HOST_KEY_REJECTED,
        'Unknown host key. conch could not ask a person to confirm it.',
        {
          data: { host: 'box', fingerprint: 'SHA256:abc', key_type: 'ssh-ed25519' },
        },
      );
    };
    const open = await setup({ onConnect: async () => unknownKey() });
    const a = errorOf(await open.call({ host: 'box' }));
    expect(a?.message).toMatch(/does not support elicitation/);
    expect(a?.hint).toMatch(/accept-new/);
    const closed = await setup({ allowedPolicies: ['strict', 'ask'], onConnect: async () => unknownKey() });
    const b = errorOf(await closed.call({ host: 'box' }));
    expect(b?.hint).toMatch(/does not allow "accept-new"/);
    expect(b?.hint).toMatch(/known_hosts/);
  });
});

describe('helpers', () => {
  test('a writeOnly parameter is never echoed in INVALID_ARGUMENT', () => {
    const schema = z.strictObject({
      password: z.string().optional().meta({ writeOnly: true }).describe('A password.'),
      port: z.number().optional().describe('A port.'),
    });
    const args = { password: 123456789, port: 'x' };
    const parsed = schema.safeParse(args);
    if (parsed.success) throw new Error('expected a failure');
    const error = invalidArgumentFromZod('connect_ssh', schema, parsed.error, args);
    expect(error.message).toContain('password = (hidden)');
    expect(error.message).toContain('port = "x"');
    expect(JSON.stringify(error.toJSON())).not.toContain('123456789');
  });

  test('cleanBanner strips escapes and control characters and caps the length', () => {
    expect(cleanBanner('\x1b]0;title\x07Hi\x1b[1m there\x1b[0m\r\n\x00\x07ok')).toBe('Hi there\nok');
    expect(cleanBanner('x'.repeat(5000))).toMatch(/\[banner cut at 4000 characters\]$/);
  });

  test('the host-key question names host, port, key type and fingerprint', () => {
    const text = hostKeyQuestionText(
      {
        host: 'jump.example',
        port: 22,
        fingerprint: 'SHA256:j',
        keyType: 'ecdsa-sha2-nistp256',
        jumpHost: true,
      },
      '/home/me/.ssh/known_hosts',
    );
    expect(text).toMatch(/jump\.example \(a ProxyJump host/);
    expect(text).toContain('Port: 22');
    expect(text).toContain('Key type: ecdsa-sha2-nistp256');
    expect(text).toContain('Fingerprint: SHA256:j');
    expect(text).toContain('/home/me/.ssh/known_hosts');
  });
});
