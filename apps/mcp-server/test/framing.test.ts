import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAlive } from './harness.js';
import { type RawServer, startRawServer, structured } from './raw-client.js';
import { TARGETS } from './targets.js';

/** Calls `execute` over raw JSON-RPC and returns its structuredContent. */
async function execute(s: RawServer, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await s.request('tools/call', { name: 'execute', arguments: args });
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
  return structured(answer);
}

describe.each(TARGETS)(
  'JSON-RPC framing over %s: every request is answered and no line stops the server',
  (target) => {
    let s: RawServer;
    let canary: string;
    beforeAll(async () => {
      s = await startRawServer([], target);
      const created = await s.request('tools/call', { name: 'create_local', arguments: {} });
      canary = String(structured(created).session_id);
      await execute(s, { command: 'export CANARY=alive; cd /tmp', session_id: canary });
    });
    afterAll(async () => {
      const pid = s.pid;
      await s.close();
      expect(isAlive(pid)).toBe(false);
    });

    async function expectCanaryIntact(): Promise<void> {
      expect(s.alive()).toBe(true);
      const r = await execute(s, { command: 'echo "$CANARY $PWD"', session_id: canary });
      expect(r.output).toBe('alive /tmp');
    }

    test('a request line over 10 MiB gets an Invalid Request error with its id; the server keeps serving', async () => {
      const id = s.nextId();
      const huge = 'x'.repeat(11 * 1024 * 1024);
      await s.write(
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"execute","arguments":{"command":"echo ${huge}"}}}\n`,
      );
      const answer = await s.answer(id);
      expect(answer.error?.code).toBe(-32600);
      expect(answer.error?.message).toContain('too long');
      expect(s.stderr()).toContain('request line too long');
      await expectCanaryIntact();
    });

    test('an over-long line without a readable id is dropped with a log line', async () => {
      await s.write(`{"params":{"pad":"${'y'.repeat(10.5 * 1024 * 1024)}"},"id":77}\n`);
      await waitFor(() => s.stderr().split('request line too long').length > 2, { what: 'the log line' });
      await expectCanaryIntact();
    });

    test('a line that is not JSON gets a Parse error (id null)', async () => {
      const before = s.messages.length;
      await s.write('{"jsonrpc":"2.0","id":\n');
      const answer = await waitFor(() => s.messages.slice(before).find((m) => m.error?.code === -32700));
      expect(answer.id).toBeNull();
      await expectCanaryIntact();
    });

    test('a JSON value that is not a JSON-RPC message gets Invalid Request when it has an id', async () => {
      const id = s.nextId();
      await s.write(`${JSON.stringify({ jsonrpc: '1.0', id, method: 42 })}\n`);
      expect((await s.answer(id)).error?.code).toBe(-32600);
    });

    test('a batch gets Invalid Request for each request in it, saying batches are not supported', async () => {
      const a = s.nextId();
      const b = s.nextId();
      await s.write(
        `${JSON.stringify([
          { jsonrpc: '2.0', id: a, method: 'tools/list' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: b, method: 'ping' },
        ])}\n`,
      );
      for (const id of [a, b]) {
        const answer = await s.answer(id);
        expect(answer.error?.code).toBe(-32600);
        expect(answer.error?.message).toContain('batches');
      }
      const before = s.messages.length;
      await s.write('[]\n');
      const empty = await waitFor(() => s.messages.slice(before).find((m) => m.error?.code === -32600));
      expect(empty.id).toBeNull();
      await expectCanaryIntact();
    });

    test('params: null and _meta: null mean absent, and are answered', async () => {
      const list = await s.request('tools/list', null);
      expect(Array.isArray(list.result?.tools)).toBe(true);
      const call = await s.request('tools/call', {
        name: 'list_sessions',
        arguments: {},
        _meta: null,
      });
      expect(call.result?.isError).not.toBe(true);
      const nullArgs = await s.request('tools/call', { name: 'execute', arguments: null });
      expect((structured(nullArgs).error as { code: string }).code).toBe('INVALID_ARGUMENT');
    });

    test('arguments of the wrong JSON type get an INVALID_ARGUMENT tool result, not a protocol error', async () => {
      for (const args of ['echo hi', 42, ['echo hi'], true]) {
        const answer = await s.request('tools/call', { name: 'execute', arguments: args });
        expect(answer.error, JSON.stringify(args)).toBeUndefined();
        expect(answer.result?.isError).toBe(true);
        const error = structured(answer).error as { code: string; message: string };
        expect(error.code).toBe('INVALID_ARGUMENT');
        expect(error.message).toContain('"execute"');
        expect(error.message).toContain('a JSON object is expected');
      }
    });
  },
);

describe.each(TARGETS)('end of input over %s', (target) => {
  test('a call sent just before EOF is answered before the connection ends', async () => {
    const s = await startRawServer([], target);
    const id = s.nextId();
    await s.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'execute', arguments: { command: 'echo answered' } } })}\n`,
    );
    const code = await s.close();
    expect(code).toBe(0);
    const answer = s.messages.find((m) => m.id === id);
    expect(answer?.result?.isError, JSON.stringify(answer)).not.toBe(true);
    expect(structured(answer ?? { jsonrpc: '2.0' })).toMatchObject({
      status: 'completed',
      output: 'answered',
    });
  });
});
