/**
 * The MCP stdio transport of `conch-mcp`: newline-delimited JSON-RPC on stdin/stdout, hardened so that no
 * request line can stop the server.
 *
 * - A line longer than {@link MAX_REQUEST_LINE_BYTES} is dropped (its bytes are not kept) and answered with
 *   a JSON-RPC `Invalid Request` error carrying the request's id when it can be read from the line's start;
 *   the server keeps serving. (The SDK's transport closes itself, and so the server, on such a line.)
 * - A line that is not JSON gets a JSON-RPC `Parse error` (id null); one that is not a JSON-RPC message gets
 *   `Invalid Request` when it has an id. Nothing is ever silently dropped for a request.
 * - `params: null` and `_meta: null` mean "absent"; `tools/call` arguments that are not a JSON object get an
 *   `INVALID_ARGUMENT` tool result like any other bad argument (see {@link checkRequest}).
 * - It knows which requests are still unanswered, so that shutdown on stdin EOF can first let them answer
 *   ({@link ConchStdioTransport.whenAnswered}).
 */

import { ConchError, ErrorCode, markPhase } from '@conch/core';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { isJsonObject } from './json.js';
import { errorResult } from './tool-kit.js';

/** Longest accepted request line, in bytes (without its newline). */
export const MAX_REQUEST_LINE_BYTES = 10 * 1024 * 1024;

/** JSON-RPC error codes used by the transport. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

type Id = string | number | null;

/** What to do with one parsed line: hand a message on, or answer it right away. */
export type LineVerdict =
  | { kind: 'message'; message: JSONRPCMessage }
  | { kind: 'reply'; reply: JSONRPCMessage }
  | { kind: 'drop'; why: string };

/** Options of {@link ConchStdioTransport}. */
export interface StdioTransportOptions {
  /** Longest accepted line in bytes (default {@link MAX_REQUEST_LINE_BYTES}). */
  maxLineBytes?: number;
  /** Receives a line for each dropped or refused message. */
  log?: (message: string, fields: Record<string, unknown>) => void;
}

/** A stdio {@link Transport} that bounds line length and answers every malformed request. */
export class ConchStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxLineBytes: number;
  private readonly log: (message: string, fields: Record<string, unknown>) => void;
  private chunks: Buffer[] = [];
  private pending = 0;
  /** True while skipping the rest of an over-long line. */
  private discarding = false;
  private started = false;
  private closed = false;
  /** Ids of requests received and not yet answered. */
  private readonly unanswered = new Set<string | number>();
  private answeredWaiters: Array<() => void> = [];

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    options: StdioTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_REQUEST_LINE_BYTES;
    this.log = options.log ?? (() => {});
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('ConchStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const line = `${JSON.stringify(message)}\n`;
    await new Promise<void>((resolve) => {
      markPhase('replying');
      if (this.stdout.write(line)) resolve();
      else this.stdout.once('drain', resolve);
    });
    if (('result' in message || 'error' in message) && 'id' in message) this.settle(message.id);
  }

  /** Number of requests received and not yet answered. */
  get unansweredCount(): number {
    return this.unanswered.size;
  }

  /**
   * Resolves once every request received so far has been answered, or after `timeoutMs` (true when all
   * were answered).
   */
  whenAnswered(timeoutMs: number): Promise<boolean> {
    if (this.unanswered.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.answeredWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private settle(id: unknown): void {
    if ((typeof id !== 'string' && typeof id !== 'number') || !this.unanswered.delete(id)) return;
    if (this.unanswered.size > 0) return;
    const waiters = this.answeredWaiters;
    this.answeredWaiters = [];
    for (const wake of waiters) wake();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.chunks = [];
    this.onclose?.();
  }

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onData = (data: Buffer | string): void => {
    let chunk = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    while (chunk.length > 0 && !this.closed) {
      const newline = chunk.indexOf(0x0a);
      const part = newline === -1 ? chunk : chunk.subarray(0, newline);
      if (!this.discarding) {
        if (this.pending + part.length > this.maxLineBytes) this.refuseLongLine(part);
        else {
          this.chunks.push(part);
          this.pending += part.length;
        }
      }
      if (newline === -1) return;
      chunk = chunk.subarray(newline + 1);
      if (this.discarding) this.discarding = false;
      else this.takeLine();
    }
  };

  /** Answers an over-long line as soon as it passes the limit, then skips it up to its newline. */
  private refuseLongLine(part: Buffer): void {
    const head = Buffer.concat([...this.chunks, part.subarray(0, 4096)])
      .subarray(0, 4096)
      .toString('utf8');
    this.chunks = [];
    this.pending = 0;
    this.discarding = true;
    const id = sniffId(head);
    this.log('request line too long; dropped', { limit_bytes: this.maxLineBytes, id });
    if (id !== undefined) {
      this.reply(
        errorReply(
          id,
          INVALID_REQUEST,
          `Request line too long: over ${this.maxLineBytes} bytes (the limit); it was dropped.`,
        ),
      );
    }
  }

  private takeLine(): void {
    markPhase('received');
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.pending = 0;
    if (line.trim() === '') return;
    const verdict = checkLine(line);
    if (verdict.kind === 'message') {
      const message = verdict.message;
      if ('method' in message && 'id' in message) this.unanswered.add(message.id);
      this.onmessage?.(message);
    } else if (verdict.kind === 'reply') this.reply(verdict.reply);
    else this.log('message dropped', { why: verdict.why });
  }

  private reply(message: JSONRPCMessage): void {
    this.send(message).catch((error: unknown) => this.onerror?.(error as Error));
  }
}

/** Decides what to do with one request line (already split off, without its newline). */
export function checkLine(line: string): LineVerdict {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return {
      kind: 'reply',
      reply: errorReply(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`),
    };
  }
  if (isJsonObject(value)) normalizeNulls(value);
  let message: JSONRPCMessage;
  if (isPlainRequest(value)) message = value as unknown as JSONRPCMessage;
  else {
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = isJsonObject(value) ? validId(value.id) : undefined;
      if (id === undefined) return { kind: 'drop', why: 'not a JSON-RPC message and no id to answer' };
      return {
        kind: 'reply',
        reply: errorReply(
          id,
          INVALID_REQUEST,
          'Invalid Request: expected a JSON-RPC 2.0 message {"jsonrpc":"2.0","id":…,"method":"…","params":{…}}.',
        ),
      };
    }
    message = parsed.data;
  }
  const refusal = checkRequest(value as Record<string, unknown>);
  const id = validId((value as Record<string, unknown>).id);
  if (refusal && id !== undefined) {
    return { kind: 'reply', reply: { jsonrpc: '2.0', id, result: refusal } as unknown as JSONRPCMessage };
  }
  return { kind: 'message', message };
}

/**
 * A `tools/call` whose `arguments` is not a JSON object is answered with the same `INVALID_ARGUMENT`
 * tool result as any other bad argument (the SDK would answer with a protocol error listing zod issues).
 */
export function checkRequest(message: Record<string, unknown>): ReturnType<typeof errorResult> | undefined {
  if (message.method !== 'tools/call' || !isJsonObject(message.params)) return undefined;
  const args = message.params.arguments;
  if (args === undefined || isJsonObject(args)) return undefined;
  const name = typeof message.params.name === 'string' ? message.params.name : '?';
  return errorResult(
    new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Invalid arguments for tool ${JSON.stringify(name)}: a JSON object is expected, got ${jsonType(args)}.`,
      { hint: 'Pass the tool parameters as an object, e.g. {"command": "ls"}.' },
    ),
  );
}

/** The members a JSON-RPC request may have. */
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * True for a request of the commonest shape, which the SDK's message schema certainly accepts as a
 * request: `jsonrpc` "2.0", a string or safe-integer id, a string method, `params` absent or an object
 * whose `_meta` is absent or holds at most a string or safe-integer `progressToken`. Such a line skips the
 * zod union parse (four schemas tried in turn); anything else takes it.
 */
export function isPlainRequest(value: unknown): value is Record<string, unknown> & { id: string | number } {
  if (!isJsonObject(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string') return false;
  if (typeof value.id !== 'string' && !Number.isSafeInteger(value.id)) return false;
  for (const key in value) if (!REQUEST_KEYS.has(key)) return false;
  const params = value.params;
  if (params === undefined) return true;
  if (!isJsonObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isJsonObject(meta)) return false;
  for (const key in meta) {
    if (key !== 'progressToken') return false;
    const token = meta.progressToken;
    if (typeof token !== 'string' && !Number.isSafeInteger(token)) return false;
  }
  return true;
}

/** `params: null`, `params._meta: null` and `arguments: null` mean the member is absent. */
function normalizeNulls(message: Record<string, unknown>): void {
  if (message.params === null) delete message.params;
  const params = message.params;
  if (!isJsonObject(params)) return;
  if (params._meta === null) delete params._meta;
  if (params.arguments === null) delete params.arguments;
}

function errorReply(id: Id, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

/** The id at the start of a line too long to parse, when it comes before the bulk (as clients write it). */
function sniffId(head: string): Id | undefined {
  const m = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!m?.[1]) return undefined;
  try {
    return validId(JSON.parse(m[1]));
  } catch {
    return undefined;
  }
}

function validId(id: unknown): Id | undefined {
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id;
  return undefined;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
