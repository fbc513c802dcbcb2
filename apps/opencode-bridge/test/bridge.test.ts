import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@conch/core/testing';
import {
  type FakeModel,
  type OpencodeTestEnv,
  opencodeTestEnv,
  processesUnder,
  startFakeModel,
} from '@conch/delegate/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/bin.cjs');

let model: FakeModel;
let env: OpencodeTestEnv;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first.`);
  model = await startFakeModel();
  env = opencodeTestEnv(model.baseURL);
});

afterAll(async () => {
  await model?.close();
  env?.cleanup();
});

beforeEach(() => {
  model.requests.length = 0;
  model.script.length = 0;
});

async function connect(args: string[] = []): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: env.env as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'bridge-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('conch-opencode', () => {
  it('lists only delegate_task, runs a task with progress, and stops opencode on stdin EOF', async () => {
    const { client } = await connect();
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['delegate_task']);
    expect(tools.tools[0]?.outputSchema).toBeDefined();

    const target = join(env.project, 'bridge.txt');
    model.script.push({ tool: 'write', args: { filePath: target, content: 'via the bridge\n' } });
    model.script.push({ text: 'Wrote bridge.txt.' });
    const progress: string[] = [];
    const result = await client.callTool(
      { name: 'delegate_task', arguments: { task: 'Write bridge.txt', dir: env.project } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ''), timeout: 120_000 },
    );
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      status: string;
      files_changed: string[];
      session_id: string;
    };
    expect(structured.status).toBe('success');
    expect(structured.files_changed).toEqual([target]);
    expect(readFileSync(target, 'utf8')).toBe('via the bridge\n');
    const content = result.content as Array<{ type: string; text: string }>;
    expect(content).toHaveLength(1);
    expect(content[0]?.text).toMatch(/^OpenCode task success/);
    expect(progress.some((line) => line.startsWith('write'))).toBe(true);

    const bad = await client.callTool({
      name: 'delegate_task',
      arguments: { task: 't', dir: env.project, agent: 'nope' },
    });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    expect((bad.structuredContent as { error: { message: string } }).error.message).toContain(
      '"build", "plan", "explore"',
    );

    expect(processesUnder(env.root).length).toBeGreaterThan(0);
    await client.close();
    await waitFor(() => processesUnder(env.root).length === 0, {
      timeoutMs: 60_000,
      what: 'OpenCode processes to exit',
    });
  }, 120_000);

  it('without opencode: DELEGATE_UNAVAILABLE with an install hint, and the bridge keeps serving', async () => {
    const { client } = await connect(['--opencode-bin', join(env.root, 'no-such-opencode')]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['delegate_task']);
    for (let i = 0; i < 2; i++) {
      const result = await client.callTool({
        name: 'delegate_task',
        arguments: { task: 't', dir: env.project },
      });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        error: { code: 'DELEGATE_UNAVAILABLE', hint: expect.stringContaining('opencode-ai') },
      });
    }
    await client.close();
  });

  it('cancelling the MCP request aborts the model request', async () => {
    const { client } = await connect();
    model.script.push({ hang: true });
    const controller = new AbortController();
    const closedBefore = model.closedEarly;
    const call = client.callTool(
      { name: 'delegate_task', arguments: { task: 'Hang', dir: env.project } },
      undefined,
      { signal: controller.signal, timeout: 120_000 },
    );
    await model.until(() => model.requests.length === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    await model.until(() => model.closedEarly > closedBefore);
    await client.close();
    await waitFor(() => processesUnder(env.root).length === 0, {
      timeoutMs: 60_000,
      what: 'OpenCode processes to exit',
    });
  }, 120_000);

  it('a bridge killed with SIGKILL leaves no opencode behind', async () => {
    const { client, transport } = await connect();
    // A task makes sure the warm server is up.
    const result = await client.callTool(
      { name: 'delegate_task', arguments: { task: 'Say hi', dir: env.project } },
      undefined,
      { timeout: 120_000 },
    );
    expect((result.structuredContent as { status: string }).status).toBe('success');
    expect(processesUnder(env.root).length).toBeGreaterThan(0);
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    process.kill(pid as number, 'SIGKILL');
    await waitFor(() => processesUnder(env.root).length === 0, {
      timeoutMs: 60_000,
      what: 'OpenCode processes to exit',
    });
    await client.close().catch(() => undefined);
  }, 120_000);
});
