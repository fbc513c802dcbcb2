/**
 * The doors of the web page (`conch web`), without a browser: the page's files carry no session data and
 * need no token; its WebSocket needs the token (a subprotocol, or a bearer header), the right Host and
 * Origin, and reads its peer through the daemon's transport guard; a view is read-only until the person
 * takes over; `conch web` keeps tokens off argv and, under a command policy, is refused to an agent.
 */

import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import * as z from 'zod';
import { BIN, type CliHome, createHome, relayClient, startDaemonWithConfig } from './harness.js';

const EmptyResult = z.object({}).loose();

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
});

/** The status of GET `url` sent with another `Host` header (fetch does not let a caller set it). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `conch web --no-open` in the home: the page's address and token. */
async function serve(args: string[] = []): Promise<{ base: string; token: string; port: number }> {
  const run = await home.conch(['web', '--no-open', ...args]);
  expect(run.code, run.stderr).toBe(0);
  const match = /^(http:\/\/127\.0\.0\.1:(\d+)\/)#token=([\w-]+)$/.exec(run.stdout.trim());
  if (!match) throw new Error(`conch web printed ${JSON.stringify(run.stdout)}`);
  return { base: match[1]!, port: Number(match[2]), token: match[3]! };
}

/** Opens the page's WebSocket; resolves with it open, or with the HTTP status it was refused with. */
function openSocket(
  url: string,
  options: { protocols?: string[]; headers?: Record<string, string> } = {},
): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', reject);
  });
}

/** A JSON-RPC client over an open page socket (one message per line, as the page speaks). */
function rpc(ws: WebSocket) {
  let next = 1;
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  const notifications: Array<Record<string, unknown>> = [];
  const others: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => {
    for (const line of String(data).split('\n')) {
      if (line.trim() === '') continue;
      const message = JSON.parse(line) as Record<string, unknown>;
      const id = message.id as number | undefined;
      if (typeof message.method === 'string') notifications.push(message);
      else if (id !== undefined && waiting.has(id)) {
        waiting.get(id)!(message);
        waiting.delete(id);
      } else others.push(message);
    }
  });
  return {
    notifications,
    others,
    call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        ws.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    },
  };
}

describe('conch web: the doors', () => {
  it('serves the page without the token, and nothing of a session with it', async () => {
    await home.conch(['exec', '--', 'echo secret-output-123']);
    const { base, token } = await serve();
    for (const path of ['', 'app.js', 'app.css']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).not.toContain('secret-output-123');
      expect(body).not.toContain(token);
    }
    const page = await fetch(base);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(
      (await fetch(`${base}api/sessions`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(404);
    expect((await fetch(base, { method: 'POST', body: '{}' })).status).toBe(405);
    expect(await statusWithHost(base, 'evil.example:80')).toBe(403);
    // The same page again: `conch web` a second time gives the same address and token.
    const again = await serve();
    expect(again).toEqual(await serve());
    expect(again.token).toBe(token);
  });

  it('refuses the live stream without the token, from another Host or Origin, and elsewhere than /ws', async () => {
    const { base, token, port } = await serve();
    const ws = `${base.replace('http', 'ws')}ws`;
    expect(await openSocket(ws, { protocols: ['conch.v1'] })).toBe(401);
    expect(await openSocket(ws, { protocols: ['conch.v1', 'conch.token.not-it-at-all-000000'] })).toBe(401);
    expect(await openSocket(ws, { headers: { authorization: 'Bearer nope' } })).toBe(401);
    const good = ['conch.v1', `conch.token.${token}`];
    expect(await openSocket(ws, { protocols: good, headers: { origin: 'http://evil.example' } })).toBe(403);
    expect(await openSocket(ws, { protocols: good, headers: { host: `rebound.example:${port}` } })).toBe(403);
    expect(await openSocket(`${base.replace('http', 'ws')}elsewhere`, { protocols: good })).toBe(404);
    const byHeader = await openSocket(ws, { headers: { authorization: `Bearer ${token}` } });
    expect(byHeader).toBeInstanceOf(WebSocket);
    (byHeader as WebSocket).close();
    const page = await openSocket(ws, { protocols: good, headers: { origin: base.replace(/\/$/, '') } });
    expect(page).toBeInstanceOf(WebSocket);
    expect((page as WebSocket).protocol).toBe('conch.v1');
    (page as WebSocket).close();
  });

  it('the stream answers bad input as the daemon does, lists the sessions, and pages output', async () => {
    const ran = await home.conch(['exec', '--json', '--', 'seq 1 500']);
    const commandId = (JSON.parse(ran.stdout) as { command_id: string }).command_id;
    const { base, token } = await serve();
    const ws = (await openSocket(`${base.replace('http', 'ws')}ws`, {
      protocols: ['conch.v1', `conch.token.${token}`],
    })) as WebSocket;
    const client = rpc(ws);
    ws.send('not json\n');
    ws.send(`${JSON.stringify([{ jsonrpc: '2.0', id: 99, method: 'conch/web/watch' }])}\n`);
    const state = (await client.call('conch/web/watch')).result as {
      sessions: Array<{ session_id: string }>;
      commands: Array<{ command_id: string; exit_code: number }>;
      records: Array<{ input: string; decision: string }>;
    };
    expect(client.others.map((m) => (m.error as { code: number }).code)).toEqual([-32700, -32600]);
    expect(state.sessions.map((s) => s.session_id)).toEqual(['default']);
    expect(state.commands).toEqual([expect.objectContaining({ command_id: commandId, exit_code: 0 })]);
    expect(state.records).toEqual([expect.objectContaining({ input: 'seq 1 500', decision: 'allow' })]);

    const last = (await client.call('conch/web/output', { command_id: commandId })).result as {
      output: string;
      page: { from_line: number; total_lines: number };
      page_header: string;
    };
    expect(last.page).toMatchObject({ from_line: 300, total_lines: 500 });
    expect(last.page_header).toBe('[lines 300-499 of 500, 0 remaining]');
    expect(last.output.split('\n')[0]).toBe('301');
    const first = (await client.call('conch/web/output', { command_id: commandId, offset: 0, length: 3 }))
      .result as { output: string };
    expect(first.output).toBe('1\n2\n3');
    const unknown = await client.call('conch/web/output', { command_id: 'c_nope' });
    expect(JSON.stringify(unknown.error)).toContain('Invalid command_id');

    // Changes arrive as they happen.
    await home.conch(['exec', '--', 'echo later']);
    await expect
      .poll(() => JSON.stringify(client.notifications), { timeout: 20_000 })
      .toContain('"command":"echo later"');
    // A message over 1 MiB ends the connection (it is not kept); the daemon serves on.
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(`${'x'.repeat(2 * 1024 * 1024)}\n`);
    expect(await closed).toBe(1009);
    expect((await home.conch(['exec', '--', 'echo still-served'])).stdout).toContain('still-served');
  });

  it("a page's view is read-only until it takes over; then its keys type into the session", async () => {
    await home.conch(['exec', '--', 'true']);
    const { base, token } = await serve();
    const ws = (await openSocket(`${base.replace('http', 'ws')}ws`, {
      protocols: ['conch.v1', `conch.token.${token}`],
    })) as WebSocket;
    const client = rpc(ws);
    const watching = (await client.call('conch/attach', { session_id: 'default', read_only: true }))
      .result as {
      attach_id: string;
      input: boolean;
      read_only_reason: string;
      cols: number;
      rows: number;
    };
    expect(watching).toMatchObject({ input: false, cols: 200, rows: 50 });
    expect(watching.read_only_reason).toMatch(/watch only/);
    const refused = await client.call('conch/input', {
      attach_id: watching.attach_id,
      data: Buffer.from('echo typed-while-watching\r').toString('base64'),
    });
    expect(JSON.stringify(refused.error)).toContain('read-only');
    const sessions = await home.conch(['sessions', '--json']);
    expect(JSON.parse(sessions.stdout).sessions[0].attached).toEqual({ viewers: 1, holds_terminal: false });

    await client.call('conch/detach', { attach_id: watching.attach_id });
    const typing = (await client.call('conch/attach', { session_id: 'default', take_over: true })).result as {
      attach_id: string;
      input: boolean;
    };
    expect(typing.input).toBe(true);
    await client.call('conch/input', {
      attach_id: typing.attach_id,
      data: Buffer.from('echo typed-by-the-page > typed.txt\r').toString('base64'),
    });
    const read = await home.conch(['exec', '--', 'cat typed.txt; rm typed.txt']);
    expect(read.stdout).toContain('typed-by-the-page');
    expect(read.stdout).not.toContain('typed-while-watching');
    ws.close();
  });

  it('keeps the token off argv, checks the address, and stops serving on --stop', async () => {
    const onArgv = await home.conch(['web', '--no-open', '--token', 'abcdefghijklmnopqrstuvwxyz']);
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toContain('--token-file');
    const badAddress = await home.conch(['web', '--no-open', '--http', 'nowhere']);
    expect(badAddress.code).toBe(2);
    expect(badAddress.stderr).toContain('--http expects HOST:PORT');
    const file = join(home.dir, 'token');
    writeFileSync(file, 'a-token-of-my-own-choosing-1234\n');
    const chosen = await serve(['--token-file', file]);
    expect(chosen.token).toBe('a-token-of-my-own-choosing-1234');
    writeFileSync(file, 'short\n');
    const short = await home.conch(['web', '--no-open', '--token-file', file]);
    expect(short.code).toBe(1);
    expect(short.stderr).toBe('conch: The token must have at least 16 characters (it has 5).\n');

    const stop = await home.conch(['web', '--stop']);
    expect(stop.stdout).toContain(`stopped serving ${chosen.base}`);
    await expect(fetch(chosen.base)).rejects.toThrow();
  });

  it('under a command policy an agent cannot get the page, and the refusal is recorded', async () => {
    const audit = join(home.dir, 'audit.jsonl');
    await startDaemonWithConfig(home, { policy: { deny: ['rm -rf'] }, audit_log: audit });
    const inside = await home.conch(['exec', '--json', '--', `${process.execPath} ${BIN} web --no-open`]);
    const result = JSON.parse(inside.stdout) as { exit_code: number; output: string };
    expect(result.exit_code).toBe(1);
    expect(result.output).toContain('Denied by policy');
    expect(result.output).not.toMatch(/#token=/);
    const { client: agent } = await relayClient(home);
    // The relay never forwards the daemon's own methods.
    await expect(agent.request({ method: 'conch/web', params: {} }, EmptyResult)).rejects.toThrow(
      /not found/i,
    );
    await agent.close();
    // A person's own terminal gets it; the page shows the policy and the refusal.
    const { base, token } = await serve();
    const ws = (await openSocket(`${base.replace('http', 'ws')}ws`, {
      protocols: ['conch.v1', `conch.token.${token}`],
    })) as WebSocket;
    const state = (await rpc(ws).call('conch/web/watch')).result as {
      policy: { active: boolean; deny: string[]; audit_log?: string };
      records: Array<{ input: string; decision: string; kind: string }>;
    };
    expect(state.policy).toMatchObject({ active: true, deny: ['rm -rf'], audit_log: audit });
    expect(state.records).toContainEqual(
      expect.objectContaining({ kind: 'attach', input: 'conch web', decision: 'deny' }),
    );
    ws.close();
  });
});
