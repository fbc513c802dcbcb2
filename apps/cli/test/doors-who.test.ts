/**
 * Who may use which door (docs/security.md): an agent behind the relay cannot use a person's methods of the
 * daemon to type around the command policy, and tokens and secrets never travel on argv.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { BIN, type CliHome, createHome, isRunning, relayClient, startDaemon } from './harness.js';

let home: CliHome;
const servers: ChildProcess[] = [];
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    const pid = server.pid;
    if (pid !== undefined && isRunning(pid)) {
      server.kill('SIGTERM');
      await waitFor(() => !isRunning(pid), { what: 'the server is gone' });
    }
  }
  await home.dispose();
});

const AnyResult = z.object({}).loose();

/** Writes a conch.config.json with a deny rule and an audit log; returns both paths. */
function denyConfig(): { config: string; audit: string } {
  const audit = join(home.dir, 'audit.jsonl');
  const config = join(home.dir, 'conch.config.json');
  writeFileSync(config, JSON.stringify({ policy: { deny: ['rm'] }, audit_log: audit }));
  return { config, audit };
}

describe('the relay is an agent’s door: a person’s methods are refused on it', () => {
  it('conch/attach with take_over and conch/input cannot type a denied command', async () => {
    const { config } = denyConfig();
    await startDaemon(home, ['--config', config]);
    const victim = join(home.dir, 'victim');
    writeFileSync(victim, 'keep me');
    const { client } = await relayClient(home);
    try {
      const denied = await client.callTool({ name: 'execute', arguments: { command: `rm -f ${victim}` } });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.structuredContent)).toContain('POLICY_DENIED');

      // The daemon's own methods, as an agent would call them through its MCP client.
      const attach = client.request(
        {
          method: 'conch/attach',
          params: { session_id: 'default', take_over: true, client_pid: 1 },
        },
        z.object({ attach_id: z.string(), input: z.boolean() }).loose(),
      );
      await expect(attach).rejects.toThrow(/conch\/attach/);
      const input = client.request(
        {
          method: 'conch/input',
          params: { attach_id: 'any', data: Buffer.from(`rm -f ${victim}\r`).toString('base64') },
        },
        AnyResult,
      );
      await expect(input).rejects.toThrow(/conch\/input/);
      // The tools still work through the relay.
      const fine = await client.callTool({ name: 'execute', arguments: { command: 'echo still-served' } });
      expect(JSON.stringify(fine.structuredContent)).toContain('still-served');
      expect(readFileSync(victim, 'utf8')).toBe('keep me');
    } finally {
      await client.close();
    }
  });

  it('the daemon refuses attach and input on a connection that said it is the relay', async () => {
    const { config } = denyConfig();
    await startDaemon(home, ['--config', config]);
    const socket = connect(join(home.env.CONCH_HOME as string, 'daemon.sock'));
    let text = '';
    socket.setEncoding('utf8').on('data', (d: string) => {
      text += d;
    });
    const answers = () =>
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { id?: unknown; error?: { message: string }; result?: unknown });
    const send = (message: object) => socket.write(`${JSON.stringify(message)}\n`);
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      send({ jsonrpc: '2.0', method: 'notifications/conch/relay' });
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'conch/attach',
        params: { session_id: 'default', take_over: true, client_pid: 1 },
      });
      send({ jsonrpc: '2.0', id: 2, method: 'conch/input', params: { attach_id: 'x', data: '' } });
      await waitFor(() => answers().filter((a) => a.id === 1 || a.id === 2).length === 2, {
        what: 'both answers',
      });
      for (const id of [1, 2]) {
        const answer = answers().find((a) => a.id === id);
        expect(answer?.result, JSON.stringify(answer)).toBeUndefined();
        expect(answer?.error?.message).toContain('relay');
      }
    } finally {
      socket.destroy();
    }
  });

  it('the HTTP face has no attach methods', async () => {
    const token = 'a-token-from-the-environment';
    const { url } = await startHttp([], { CONCH_MCP_TOKEN: token });
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      await expect(
        client.request(
          { method: 'conch/attach', params: { session_id: 'default', take_over: true, client_pid: 1 } },
          AnyResult,
        ),
      ).rejects.toThrow(/Method not found/);
    } finally {
      await client.close();
    }
  });
});

/**
 * Starts `conch mcp --http 127.0.0.1:0 ARGS` and resolves with its URL and the token it printed (a
 * generated one; empty when it was given one).
 */
function startHttp(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ url: string; token: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '127.0.0.1:0', ...args], {
    env: { ...home.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  servers.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const url = /at (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url) resolve({ url, token: /bearer token: (\S+)/.exec(stderr)?.[1] ?? '', child });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
  });
}

/** The argv of a running process, as every local user can read it. */
function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

describe('tokens and secrets never travel on argv', () => {
  it('--token on the command line is refused with how to pass it', async () => {
    // Either it exits (refused) or it serves with the token in its argv (the defect): whichever comes first.
    const outcome = await startHttp(['--token', 'argv-token-123']).then(
      ({ child }) => ({ served: cmdline(child.pid as number), stderr: '' }),
      (error: Error) => ({ served: undefined, stderr: error.message }),
    );
    expect(outcome.served).toBeUndefined();
    expect(outcome.stderr).toContain('exited (2)');
    expect(outcome.stderr).toContain('--token');
    expect(outcome.stderr).toContain('CONCH_MCP_TOKEN');
    expect(outcome.stderr).toContain('--token-file');
  });

  it('the token comes from --token-file or CONCH_MCP_TOKEN, and is not in the process arguments', async () => {
    const file = join(home.dir, 'token');
    writeFileSync(file, 'file-token-456\n', { mode: 0o600 });
    const fromFile = await startHttp(['--token-file', file]);
    expect(fromFile.token).toBe('');
    const fromEnv = await startHttp([], { CONCH_MCP_TOKEN: 'env-token-789' });
    for (const { url, token, child } of [
      { ...fromFile, token: 'file-token-456' },
      { ...fromEnv, token: 'env-token-789' },
    ]) {
      expect(cmdline(child.pid as number)).not.toContain(token);
      const client = new Client({ name: 'test', version: '0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const r = await client.callTool({ name: 'execute', arguments: { command: 'echo token-ok' } });
      expect(JSON.stringify(r.structuredContent)).toContain('token-ok');
      await client.close();
    }
  });

  it('conch respond ID TEXT --secret is refused: the secret comes from the terminal or stdin', async () => {
    const asked = await home.conch([
      'exec',
      '--pause',
      '1',
      '--',
      'read -r -s -p "password: " P; echo; echo "got ${#P} chars"',
    ]);
    const id = /still running: (c_[a-z0-9]+)/.exec(asked.stderr)?.[1] as string;
    expect(id).toBeDefined();
    const refused = await home.conch(['respond', id, 'argv-secret', '--secret']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--secret');
    expect(refused.stderr).toContain('stdin');
    // Piped on stdin, the secret is typed and never shown.
    const piped = await home.conch(['respond', id, '--secret'], 'piped-secret\n');
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('got 12 chars');
    expect(piped.stdout + piped.stderr).not.toContain('piped-secret');
    expect(existsSync(join(home.dir, 'argv-secret'))).toBe(false);
  });
});
