import { JSONRPCMessageSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { checkLine, isPlainRequest } from './stdio-transport.js';

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
