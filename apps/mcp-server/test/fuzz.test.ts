/**
 * Bad-input fuzz against the BUILT server behind each of its doors (stdio, the daemon's socket, the relay
 * `conch mcp --daemon`: see targets.ts): generated, seeded arguments for every tool and generated JSON-RPC
 * framing (wrong types, huge strings and lines, NUL bytes, lone surrogates, invalid UTF-8, negative and
 * enormous numbers, unknown fields, null params, batches). Every request with an id gets a structured error
 * or a valid result, the server never dies, a canary session keeps its state, and every door answers each
 * case as stdio does (the same seed sends the same cases to each).
 * Writes `<repo>/.reliability/fuzz.json` (`{ "fuzzCases": n }`) for the reliability summary.
 */

import { writeReliabilityReport } from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { descendants, isAlive } from './harness.js';
import { type RawServer, type RpcMessage, startRawServer, structured } from './raw-client.js';
import { TARGETS, type Target } from './targets.js';

const SEED = Number(process.env.CONCH_FUZZ_SEED ?? 1307);
const TOOL_CASES = 360;
const FRAMING_CASES = 240;

/** mulberry32: a small seeded PRNG, so every run sends the same cases. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The generator of the case being made: each case has its own (seeded with the seed and the case's number),
 * so that a case is the same on every door whatever the answers to the cases before it.
 */
let random = rng(SEED);
const seedCase = (n: number) => {
  random = rng(SEED * 100_003 + n);
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Harmless strings: as a command each runs briefly (or is refused); none names the canary. */
const STRINGS: readonly string[] = [
  '',
  ' ',
  'echo fuzz',
  'true',
  'printf "%s\\n" a b c',
  '\u0000',
  'echo a\u0000b',
  '\ud800',
  'echo \udfff lone',
  'x'.repeat(100_000),
  `echo ${'y'.repeat(2 * 1024 * 1024)}`,
  'c_doesnotexist',
  's_doesnotexist',
  'default',
  '/tmp',
  '/nonexistent/dir',
  '../../..',
  '(',
  '^(a+)+$',
  '[secret]',
  '\u001b[31mred\u001b[0m',
  'ctrl+c',
  'enter',
  'SIGKILL',
  'SIGBANANA',
  'screen',
  'raw',
  '$(echo sub)',
  '\r\n',
  '🐚'.repeat(1000),
];
const NUMBERS: readonly number[] = [
  0,
  -1,
  1,
  0.5,
  -0.000001,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  Number.MIN_VALUE,
  3,
  100,
  1000,
  1001,
];

function value(depth = 0): unknown {
  const kind = pick(['string', 'string', 'number', 'number', 'bool', 'null', 'array', 'object']);
  switch (kind) {
    case 'string':
      return pick(STRINGS);
    case 'number':
      return pick(NUMBERS);
    case 'bool':
      return random() < 0.5;
    case 'null':
      return null;
    case 'array':
      return depth > 1 ? [] : Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
    default:
      return depth > 1 ? {} : { [pick(['a', 'key', '__proto__', 'constructor', 'enter'])]: value(depth + 1) };
  }
}

interface ToolInfo {
  name: string;
  inputSchema: { properties?: Record<string, unknown> };
}

/** Arguments for `tool`: some real parameters with hostile values, sometimes unknown fields. */
function argumentsFor(tool: ToolInfo, ids: { commandIds: string[] }): Record<string, unknown> {
  const names = Object.keys(tool.inputSchema.properties ?? {});
  const args: Record<string, unknown> = {};
  for (const name of names) {
    if (random() < 0.45) continue;
    args[name] = value();
    if (name === 'command_id' && ids.commandIds.length > 0 && random() < 0.5)
      args[name] = pick(ids.commandIds);
  }
  if (random() < 0.2) args[pick(['unknown', 'extra_field', 'sessionId', 'COMMAND'])] = value();
  if (tool.name === 'connect_ssh') {
    // Never reach out: a string host is always the local loopback on a closed port.
    if (typeof args.host === 'string' || args.host === undefined) args.host = '127.0.0.1';
    args.port = 1;
  }
  return args;
}

function assertStructuredAnswer(answer: RpcMessage, what: string): void {
  if (answer.error !== undefined) {
    expect(typeof answer.error.code, what).toBe('number');
    expect(typeof answer.error.message, what).toBe('string');
    return;
  }
  const result = answer.result as { content?: unknown[]; isError?: boolean } | undefined;
  expect(typeof result, what).toBe('object');
  if (result?.content !== undefined || result?.isError !== undefined)
    expect(Array.isArray(result?.content), what).toBe(true);
  if (result?.isError === true) {
    const text = (result.content?.[0] as { text?: string } | undefined)?.text ?? '';
    // An unknown tool name is answered by the MCP SDK itself, with a text naming the tool.
    if (/^MCP error -32602: Tool .* not found/s.test(text)) return;
    const error = structured(answer).error as { code?: unknown; message?: unknown } | undefined;
    expect(typeof error?.code, what).toBe('string');
    expect(typeof error?.message, what).toBe('string');
  }
}

/**
 * What an answer says, without what differs from run to run (ids, times, pids, paths): the JSON-RPC error
 * code, the tool error code, or `ok`.
 */
function answerKind(answer: RpcMessage): string {
  if (answer.error !== undefined) return `rpc ${answer.error.code}`;
  const result = answer.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
  if (result?.isError !== true) return 'ok';
  const code = (structured(answer).error as { code?: string } | undefined)?.code;
  return code
    ? `tool ${code}`
    : `text ${(result.content?.[0]?.text ?? '').replace(/\d+/g, 'N').slice(0, 80)}`;
}

/** The answers of each door, case by case, for the comparison with stdio. */
const kinds = new Map<Target, string[]>();

/** One framing case: the raw line and the id an answer must carry (undefined: no answer is owed). */
function framingCase(n: number): { line: string | Buffer; answerId?: string | number } {
  const id = `f${n}`;
  const kind = pick([
    'truncated',
    'not-object',
    'wrong-version',
    'method-type',
    'unknown-method',
    'null-params',
    'params-type',
    'meta-null',
    'notification',
    'id-type',
    'nul-bytes',
    'invalid-utf8',
    'lone-surrogate',
    'tool-call',
    'batch',
    'huge-line',
  ] as const);
  const json = (message: unknown) => JSON.stringify(message);
  switch (kind) {
    case 'truncated':
      return {
        line: json({ jsonrpc: '2.0', id, method: 'tools/list' }).slice(0, 1 + Math.floor(random() * 30)),
      };
    case 'not-object':
      return { line: json(pick([42, 'str', null, [1, 2], true])) };
    case 'wrong-version':
      return { line: json({ jsonrpc: pick(['1.0', 2, null]), id, method: 'tools/list' }), answerId: id };
    case 'method-type':
      return { line: json({ jsonrpc: '2.0', id, method: value() ?? 7 }), answerId: id };
    case 'unknown-method':
      return {
        line: json({ jsonrpc: '2.0', id, method: pick(['nope', 'tools/nope', '', '\u0000']) }),
        answerId: id,
      };
    case 'null-params':
      return {
        line: json({ jsonrpc: '2.0', id, method: pick(['tools/list', 'ping', 'tools/call']), params: null }),
        answerId: id,
      };
    case 'params-type':
      return { line: json({ jsonrpc: '2.0', id, method: 'tools/call', params: value() }), answerId: id };
    case 'meta-null':
      return {
        line: json({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'list_sessions', _meta: null },
        }),
        answerId: id,
      };
    case 'notification':
      return {
        line: json({ jsonrpc: '2.0', method: pick(['notifications/cancelled', 'nope']), params: value() }),
      };
    case 'id-type':
      return { line: json({ jsonrpc: '2.0', id: pick([{}, [], true, null]), method: 'tools/list' }) };
    case 'nul-bytes':
      return { line: `{"jsonrpc":"2.0","id":"${id}",\u0000"method":"ping"}` };
    case 'invalid-utf8':
      return {
        line: Buffer.concat([
          Buffer.from(
            `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"execute","arguments":{"command":"echo `,
          ),
          Buffer.from([0xff, 0xfe, 0xc3]),
          Buffer.from('"}}}'),
        ]),
        answerId: id,
      };
    case 'lone-surrogate':
      return {
        line: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"\\ud800","arguments":{"\\udc00":"\\ud800"}}}`,
        answerId: id,
      };
    case 'batch':
      return {
        line: json([
          { jsonrpc: '2.0', id, method: 'tools/list' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
        ]),
        answerId: id,
      };
    case 'tool-call':
      return {
        line: json({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: value(), arguments: value() },
        }),
        answerId: id,
      };
    default:
      return {
        line: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"execute","arguments":{"command":"${'z'.repeat(10 * 1024 * 1024 + 100)}"}}}`,
        answerId: id,
      };
  }
}

let cases = 0;
afterAll(() => writeReliabilityReport('fuzz', { fuzzCases: cases }));

describe.each(TARGETS)('bad-input fuzz of every tool and of the JSON-RPC framing over %s', (target) => {
  let s: RawServer;
  let canary: string;
  const seen: string[] = [];
  beforeAll(async () => {
    kinds.set(target, seen);
    s = await startRawServer([], target);
    const created = await s.request('tools/call', { name: 'create_local', arguments: { name: 'canary' } });
    canary = String(structured(created).session_id);
    const set = await s.request('tools/call', {
      name: 'execute',
      arguments: { command: 'export CANARY=alive; cd /tmp', session_id: canary },
    });
    expect(structured(set).status).toBe('completed');
  });
  afterAll(async () => {
    if (!s) return;
    const pid = s.pid;
    const children = descendants(pid);
    expect(await s.close()).toBe(0);
    expect(isAlive(pid)).toBe(false);
    for (const child of children) expect(isAlive(child), `child ${child}`).toBe(false);
  });

  async function expectCanaryIntact(what: string): Promise<void> {
    expect(s.alive(), what).toBe(true);
    const r = await s.request('tools/call', {
      name: 'execute',
      arguments: { command: 'echo "$CANARY $PWD"', session_id: canary },
    });
    expect(structured(r).output, what).toBe('alive /tmp');
  }

  test('every tool call with generated arguments gets a structured answer', async () => {
    const list = await s.request('tools/list');
    const all = (list.result?.tools ?? []) as ToolInfo[];
    expect(all.length).toBeGreaterThan(5);
    // In name order, so that case n calls the same tool on every door.
    const tools = all.filter((t) => t.name !== 'close_session').sort((a, b) => a.name.localeCompare(b.name));
    const closeSession = all.find((t) => t.name === 'close_session');
    const ids = { commandIds: [] as string[] };
    const called = new Set<string>();
    for (let n = 0; n < TOOL_CASES; n++) {
      seedCase(n);
      // Every tool in turn (close_session now and then, so that the canary's siblings come and go).
      const tool = n % 40 === 39 && closeSession ? closeSession : tools[n % tools.length]!;
      called.add(tool.name);
      const args = argumentsFor(tool, ids);
      if (tool.name === 'close_session' && args.session_id === canary) delete args.session_id;
      const what = `${tool.name} ${JSON.stringify(args).slice(0, 300)}`;
      const answer = await s.request('tools/call', { name: tool.name, arguments: args }, 60_000);
      cases++;
      assertStructuredAnswer(answer, what);
      seen.push(`tool case ${n} ${tool.name}: ${answerKind(answer)}`);
      const commandId = structured(answer).command_id;
      if (typeof commandId === 'string') ids.commandIds.push(commandId);
      if (n % 60 === 59) await expectCanaryIntact(`after tool case ${n}`);
    }
    expect([...called].sort()).toEqual(all.map((t) => t.name).sort());
    await expectCanaryIntact('after the tool fuzz');
  }, 120_000);

  test('every framing case with an id is answered; the rest never stop the server', async () => {
    for (let n = 0; n < FRAMING_CASES; n++) {
      seedCase(TOOL_CASES + n);
      const { line, answerId } = framingCase(n);
      await s.write(typeof line === 'string' ? `${line}\n` : Buffer.concat([line, Buffer.from('\n')]));
      cases++;
      if (answerId !== undefined) {
        const answer = await s.answer(answerId, 60_000);
        assertStructuredAnswer(answer, `framing case ${n}: ${String(line).slice(0, 200)}`);
        seen.push(`framing case ${n}: ${answerKind(answer)}`);
      } else {
        // Owed no answer: a ping after it proves the line was consumed and the server still serves.
        expect((await s.request('ping')).result, `framing case ${n}`).toBeDefined();
      }
      if (n % 60 === 59) await expectCanaryIntact(`after framing case ${n}`);
    }
    await expectCanaryIntact('after the framing fuzz');
  }, 120_000);
});

/**
 * Answers that may differ between two runs of the same case, because they depend on how far a command got
 * when the call came (a `respond` to a command that has just ended, a kill of one that was still running).
 */
const TIMING = /: (ok|tool COMMAND_FINISHED|tool WRITE_TIMEOUT)$/;

describe.runIf(TARGETS.includes('stdio') && TARGETS.length > 1)(
  'every door answers the fuzz as stdio does',
  () => {
    test.each(TARGETS.filter((t) => t !== 'stdio'))('%s', (target) => {
      const stdio = kinds.get('stdio') ?? [];
      const other = kinds.get(target) ?? [];
      expect(other.length).toBe(stdio.length);
      const pairs = other.map((kind, i) => [stdio[i] as string, kind] as const).filter(([a, b]) => a !== b);
      expect(pairs.filter(([a, b]) => !(TIMING.test(a) && TIMING.test(b)))).toEqual([]);
      // Timing may make a few answers differ, never many: the comparison is not vacuous.
      expect(pairs.length).toBeLessThan(other.length / 20);
    });
  },
);
