import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { waitFor } from '@conch/core/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, createHome, isRunning } from './harness.js';

let home: CliHome | undefined;
let server: ChildProcess | undefined;
afterEach(async () => {
  if (server?.pid && isRunning(server.pid)) {
    server.kill('SIGTERM');
    const pid = server.pid;
    await waitFor(() => !isRunning(pid), { what: 'the HTTP server is gone' });
  }
  await home?.dispose();
});

/** Starts `conch mcp --http 127.0.0.1:0` and reads its URL and generated token from stderr. */
async function startHttp(): Promise<{ url: string; token: string }> {
  home = createHome();
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '127.0.0.1:0'], {
    env: home.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  server = child;
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const token = /bearer token: (\S+)/.exec(stderr)?.[1];
      const url = /at (http:\/\/\S+)/.exec(stderr)?.[1];
      if (token && url) resolve({ url, token });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
  });
}

/** A raw POST (node:http lets a test set any Host header). */
function post(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
}

describe('conch mcp --http', () => {
  it('401 without the token, 403 for a foreign Host or Origin, and works with the token', async () => {
    const { url, token } = await startHttp();
    expect(await post(url, {})).toBe(401);
    expect(await post(url, { authorization: 'Bearer wrong' })).toBe(401);
    expect(await post(url, { authorization: `Bearer ${token}`, host: 'evil.example:80' })).toBe(403);
    expect(await post(url, { authorization: `Bearer ${token}`, origin: 'http://evil.example' })).toBe(403);

    const client = new Client({ name: 'test', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const result = await client.callTool({ name: 'execute', arguments: { command: 'echo over-http' } });
    expect((result.structuredContent as { output: string }).output).toContain('over-http');
    await client.close();
  });
});
