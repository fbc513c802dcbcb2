import { PassThrough } from 'node:stream';
import { JSONRPCMessageSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { ConchLineTransport, checkLine, isPlainRequest } from './line-transport.js';

const call = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'execute', arguments: { command: 'ls' } },
};

/** Requests of many shapes, valid and not, around the common one. */
const CASES: unknown[] = [
  call,
  { ...call, id: 'a-string-id' },
  { ...call, id: 0 },
  { ...call, id: -7 },
  { ...call, id: 1.5 },
  { ...call, id: 2 ** 60 },
  { ...call, id: null },
  { ...call, id: true },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'ping', params: {} },
  { ...call, params: { ...call.params, _meta: {} } },
  { ...call, params: { ...call.params, _meta: { progressToken: 'tok' } } },
  { ...call, params: { ...call.params, _meta: { progressToken: 12 } } },
  { ...call, params: { ...call.params, _meta: { progressToken: 1.5 } } },
  { ...call, params: { ...call.params, _meta: { progressToken: null } } },
  { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } } },
  { ...call, params: { ...call.params, _meta: { other: 1 } } },
  { ...call, params: { ...call.params, _meta: [] } },
  { ...call, params: { ...call.params, _meta: 'x' } },
  { ...call, params: [] },
  { ...call, params: 'x' },
  { ...call, jsonrpc: '1.0' },
  { ...call, method: 5 },
  { ...call, extra: true },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 4, result: {} },
  { jsonrpc: '2.0', id: 5, error: { code: -1, message: 'no' } },
  [call],
  'text',
  null,
];

describe('isPlainRequest: the shortcut past the SDK message schema', () => {
  test('accepts only what the SDK request schema accepts (never more), and the common shapes', () => {
    for (const value of CASES) {
      if (isPlainRequest(value))
        expect(JSONRPCRequestSchema.safeParse(value).success, JSON.stringify(value)).toBe(true);
    }
    expect(isPlainRequest(call)).toBe(true);
    expect(isPlainRequest({ ...call, params: { ...call.params, _meta: { progressToken: 'tok' } } })).toBe(
      true,
    );
    expect(isPlainRequest({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).toBe(true);
  });

  test('checkLine gives the same verdict with and without the shortcut', () => {
    for (const value of CASES) {
      const verdict = checkLine(JSON.stringify(value));
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (verdict.kind === 'message') {
        expect(parsed.success, JSON.stringify(value)).toBe(true);
        expect(verdict.message).toEqual(parsed.data);
      } else expect(parsed.success, JSON.stringify(value)).toBe(false);
    }
  });
});

describe('batches', () => {
  test('each request of a batch gets Invalid Request; a batch of notifications gets nothing', () => {
    const verdict = checkLine(
      JSON.stringify([
        { jsonrpc: '2.0', id: 7, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
      ]),
    );
    expect(verdict.kind).toBe('reply');
    const replies = verdict.kind === 'reply' ? verdict.replies : [];
    expect(replies.map((r) => (r as { id: unknown }).id)).toEqual([7, 'b']);
    for (const r of replies) expect((r as { error: { code: number } }).error.code).toBe(-32600);
    expect(checkLine('[]')).toMatchObject({ kind: 'reply', replies: [{ id: null }] });
    expect(checkLine(JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).kind).toBe(
      'drop',
    );
  });
});

describe('ConchLineTransport', () => {
  const line = (message: object) => `${JSON.stringify(message)}\n`;

  test('a server answers a refused line to its peer; a client takes it as its own request error', async () => {
    const serverIn = new PassThrough();
    const serverOut = new PassThrough();
    const server = new ConchLineTransport(serverIn, serverOut);
    await server.start();
    serverIn.write('{not json\n');
    const answer = JSON.parse(String(serverOut.read())) as { id: unknown; error: { code: number } };
    expect(answer).toMatchObject({ id: null, error: { code: -32700 } });

    const clientIn = new PassThrough();
    const client = new ConchLineTransport(clientIn, new PassThrough(), { role: 'client', maxLineBytes: 100 });
    const received: unknown[] = [];
    client.onmessage = (m) => received.push(m);
    await client.start();
    clientIn.write(`{"jsonrpc":"2.0","id":5,"result":{"pad":"${'x'.repeat(200)}"}}\n`);
    expect(received).toEqual([
      expect.objectContaining({ id: 5, error: expect.objectContaining({ code: -32600 }) }),
    ]);
  });

  test('while more than the backlog limit waits for a peer that does not read, its input is paused', async () => {
    const input = new PassThrough();
    const output = new PassThrough({ highWaterMark: 16 });
    const transport = new ConchLineTransport(input, output, { maxBacklogBytes: 1000 });
    await transport.start();
    const pending = transport.send({ jsonrpc: '2.0', id: 1, result: { pad: 'y'.repeat(5000) } } as never);
    expect(transport.backlogBytes).toBeGreaterThan(1000);
    expect(input.isPaused()).toBe(true);
    output.resume();
    await pending;
    expect(input.isPaused()).toBe(false);
  });

  test('unanswered requests are known until their answer is sent', async () => {
    const input = new PassThrough();
    const transport = new ConchLineTransport(input, new PassThrough());
    transport.onmessage = () => {};
    await transport.start();
    input.write(line({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    expect(transport.unansweredIds()).toEqual([3]);
    await transport.send({ jsonrpc: '2.0', id: 3, result: {} } as never);
    expect(transport.unansweredIds()).toEqual([]);
  });
});
