/**
 * `conch mcp --http` holds its resources: MCP sessions expire when idle and are capped, a request body is
 * capped, and connections are capped so that half-open ones cannot starve the server of file descriptors
 * (a real client still gets through).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { waitFor } from '@conch/core/testing';
import { openFds } from '@conch/node/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, createHome, isRunning } from './harness.js';

let home: CliHome;
let server: ChildProcess | undefined;
const TOKEN = 'http-test-token';
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  const pid = server?.pid;
  if (pid !== undefined && isRunning(pid)) {
    server?.kill('SIGTERM');
    await waitFor(() => !isRunning(pid), { what: 'the HTTP server is gone' });
  }
  server = undefined;
  await home.dispose();
});

/** What the HTTP server wrote to stderr so far. */
let serverLog = '';

/** Starts `conch mcp --http 127.0.0.1:0 ARGS` with the test token; resolves with its URL. */
function startHttp(args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '127.0.0.1:0', ...args], {
    env: { ...home.env, CONCH_MCP_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server = child;
  serverLog = '';
  return new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      serverLog += d;
      const url = /at (http:\/\/\S+)/.exec(serverLog)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${serverLog}`)));
  });
}

/** A raw POST with the token; resolves with the status, the MCP session id it names, and the body. */
function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; session?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          text += d;
        });
        const session = res.headers['mcp-session-id'];
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ...(typeof session === 'string' ? { session } : {}),
            body: text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

/** Opens an MCP session with a raw initialize; resolves with its id. */
async function openSession(url: string): Promise<string> {
  const answer = await post(url, initialize);
  if (answer.session === undefined) throw new Error(`no session id (status ${answer.status})`);
  return answer.session;
}

describe('conch mcp --http holds its resources', () => {
  it('an idle MCP session expires; beyond the session cap the least recently used one goes', async () => {
    const url = await startHttp(['--http-idle-timeout', '1', '--http-max-sessions', '2']);
    const first = await openSession(url);
    expect((await post(url, ping, { 'mcp-session-id': first })).status).toBe(200);
    // Left idle for more than a second, it is closed (the test waits for the server to say so).
    await waitFor(() => serverLog.includes('MCP session closed why=idle'), {
      what: 'the idle session is closed',
    });
    expect((await post(url, ping, { 'mcp-session-id': first })).status).toBe(404);

    const a = await openSession(url);
    const b = await openSession(url);
    const c = await openSession(url);
    expect((await post(url, ping, { 'mcp-session-id': c })).status).toBe(200);
    expect((await post(url, ping, { 'mcp-session-id': b })).status).toBe(200);
    expect((await post(url, ping, { 'mcp-session-id': a })).status).toBe(404);
  });

  it('a body over the cap is refused with 413 before it is read whole', async () => {
    const url = await startHttp(['--http-max-body', '100000']);
    const big = await post(url, Buffer.alloc(20 * 1024 * 1024, 0x20));
    expect(big.status).toBe(413);
    expect(big.body).toContain('100000');
    expect((await post(url, initialize)).status).toBe(200);
  });

  it('half-open connections beyond the cap do not starve the server: a real client gets through', async () => {
    const url = await startHttp(['--http-max-connections', '20']);
    const { port } = new URL(url);
    const idle: Socket[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => {});
        idle.push(socket);
      }
      await Promise.all(
        idle.map(
          (s) => new Promise((resolve) => (s.connecting ? s.once('connect', resolve) : resolve(null))),
        ),
      );
      const client = new Client({ name: 'test', version: '0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        }),
      );
      const r = await client.callTool({ name: 'execute', arguments: { command: 'echo through' } });
      expect(JSON.stringify(r.structuredContent)).toContain('through');
      await client.close();
      const sockets = openFds(server?.pid as number).filter((t) => t.startsWith('socket:')).length;
      expect(sockets).toBeLessThan(60);
    } finally {
      for (const socket of idle) socket.destroy();
    }
  });
});
