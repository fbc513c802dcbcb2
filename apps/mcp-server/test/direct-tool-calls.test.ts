/**
 * Conch's tool calls take a direct path past the SDK's generic request handling (packages/mcp
 * direct-tool-calls.ts); anything unusual goes through the SDK's request handling. Both paths must answer alike, honour
 * cancellation and progress, and keep the server serving.
 */
import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAlive } from './harness.js';
import { type RawServer, startRawServer, structured } from './raw-client.js';

describe("tools/call: the direct path and the SDK's request handling", () => {
  let s: RawServer;
  beforeAll(async () => {
    s = await startRawServer();
  });
  afterAll(async () => {
    const pid = s.pid;
    await s.close();
    expect(isAlive(pid)).toBe(false);
  });

  /** Writes a tools/call request without waiting for its answer; returns its id. */
  async function sendCall(params: Record<string, unknown>): Promise<number> {
    const id = s.nextId();
    await s.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params })}\n`);
    return id;
  }

  test('a call answers the same whichever path it takes', async () => {
    const params = { name: 'check_command', arguments: { command: 'rm -rf /tmp/x && ls' } };
    const short = await s.request('tools/call', params);
    // An unknown `_meta` member sends the call through the SDK's request handling.
    const sdk = await s.request('tools/call', { ...params, _meta: { 'example.com/trace': 'abc' } });
    expect(short.error).toBeUndefined();
    expect(short.result).toEqual(sdk.result);
    expect((structured(short).commands as unknown[]).length).toBe(2);
  });

  test('bad arguments get the same INVALID_ARGUMENT result on both paths', async () => {
    const params = { name: 'execute', arguments: { command: 'true', pause_timeout: -1 } };
    const short = await s.request('tools/call', params);
    const sdk = await s.request('tools/call', { ...params, _meta: { 'example.com/trace': 'abc' } });
    expect(short.result?.isError).toBe(true);
    expect((structured(short).error as { code?: string }).code).toBe('INVALID_ARGUMENT');
    expect(short.result).toEqual(sdk.result);
  });

  test('an unknown tool still gets the SDK answer naming it', async () => {
    const answer = await s.request('tools/call', { name: 'no_such_tool', arguments: {} });
    const text = JSON.stringify(answer.result ?? answer.error);
    expect(text).toContain('no_such_tool');
  });

  test('progress notifications carry the request progress token', async () => {
    const id = await sendCall({
      name: 'execute',
      arguments: { command: 'for i in 1 2 3; do echo tick $i; sleep 1; done', pause_timeout: 30 },
      _meta: { progressToken: 'tok-1' },
    });
    const answer = await s.answer(id);
    expect(structured(answer).status).toBe('completed');
    const progress = s.messages.filter(
      (m) =>
        m.method === 'notifications/progress' &&
        (m as { params?: { progressToken?: unknown } }).params?.progressToken === 'tok-1',
    );
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });

  test('a cancelled call is never answered; its command runs on and the server keeps serving', async () => {
    const id = await sendCall({
      name: 'execute',
      arguments: { command: 'sleep 1; echo cancelled-call-done', pause_timeout: 60 },
    });
    const listed = await waitFor(
      async () => {
        const r = await s.request('tools/call', {
          name: 'list_processes',
          arguments: { filter: 'cancelled-call-done' },
        });
        const rows = structured(r).processes as { command_id: string; state: string }[];
        return rows[0];
      },
      { what: 'the command to be listed' },
    );
    await s.write(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`,
    );
    const done = await s.request('tools/call', {
      name: 'read_output',
      arguments: { command_id: listed.command_id, pause_timeout: 30 },
    });
    expect(structured(done).status).toBe('completed');
    expect(structured(done).output).toContain('cancelled-call-done');
    // The command ended before read_output answered: an answer to the cancelled call would have come first.
    const after = await s.request('tools/call', { name: 'list_sessions', arguments: {} });
    expect(after.result?.isError).toBeUndefined();
    expect(s.messages.some((m) => m.id === id)).toBe(false);
  });
});
