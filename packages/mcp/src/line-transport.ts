/**
 * The one transport guard of conch's newline-delimited JSON-RPC doors: `conch-mcp`'s stdio, the daemon's
 * unix socket (each connection) and the relay `conch mcp --daemon` all read their peer through
 * {@link ConchLineTransport}, so that no line can stop any of them and every request gets an answer.
 *
 * - A line longer than {@link MAX_REQUEST_LINE_BYTES} is dropped (its bytes are not kept) and answered with
 *   a JSON-RPC `Invalid Request` error carrying the request's id when it can be read from the line's start;
 *   the door keeps serving. (The SDK's transports close themselves, and so the server, on such a line.)
 * - A line that is not JSON gets a JSON-RPC `Parse error` (id null); one that is not a JSON-RPC message gets
 *   `Invalid Request` when it has an id. A batch (a JSON array) gets `Invalid Request` for each request in it
 *   (MCP has no batches since 2025-06-18). Nothing is ever silently dropped for a request.
 * - `params: null` and `_meta: null` mean "absent"; `tools/call` arguments that are not a JSON object get an
 *   `INVALID_ARGUMENT` tool result like any other bad argument (see {@link checkRequest}).
 * - A peer that does not read: while more than `maxBacklogBytes` wait to be written to it, the transport
 *   stops reading its requests (they would only queue more answers), and says how much waits
 *   ({@link ConchLineTransport.backlogBytes}) so that senders of unasked-for output can drop it.
 * - It knows which requests are still unanswered, so that the end of the input can first let them answer
 *   ({@link ConchLineTransport.whenAnswered}).
 *
 * As a client's transport (`role: 'client'`, the CLI and the relay toward the daemon) a line it cannot
 * take is not answered back: a refusal carrying an id is handed to the client as that request's error, the
 * rest is reported through `onerror`.
 */

import { ConchError, ErrorCode, markPhase } from '@conch/core';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorResult } from './error-result.js';
import { isJsonObject } from './json.js';
import { MAX_REQUEST_LINE_BYTES } from './limits.js';

export { MAX_REQUEST_LINE_BYTES } from './limits.js';

/** Bytes waiting to be written to a peer beyond which its input is paused (see the module doc). */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

/** JSON-RPC error codes used by the transport. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

type Id = string | number | null;

/** What to do with one parsed line: hand a message on, answer it right away, or drop it. */
export type LineVerdict =
  | { kind: 'message'; message: JSONRPCMessage }
  | { kind: 'reply'; replies: JSONRPCMessage[] }
  | { kind: 'drop'; why: string };

/** Options of {@link ConchLineTransport}. */
export interface LineTransportOptions {
  /** Longest accepted line in bytes (default {@link MAX_REQUEST_LINE_BYTES}). */
  maxLineBytes?: number;
  /** Bytes queued for the peer beyond which its input is paused (default {@link MAX_BACKLOG_BYTES}). */
  maxBacklogBytes?: number;
  /** Receives a line for each dropped or refused message. */
  log?: (message: string, fields: Record<string, unknown>) => void;
  /**
   * `server` (default): refusals are answered to the peer. `client`: they are handed to this side as the
   * error of the request they name (see the module doc).
   */
  role?: 'server' | 'client';
  /** End the output and destroy the input on {@link ConchLineTransport.close} (a socket); default false (stdio). */
  endStreams?: boolean;
}

/** A newline-delimited JSON-RPC {@link Transport} over a byte stream pair, with the guard of the module doc. */
export class ConchLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxLineBytes: number;
  private readonly maxBacklogBytes: number;
  private readonly log: (message: string, fields: Record<string, unknown>) => void;
  private readonly role: 'server' | 'client';
  private readonly endStreams: boolean;
  private chunks: Buffer[] = [];
  private pending = 0;
  /** True while skipping the rest of an over-long line. */
  private discarding = false;
  /** True while the input is paused because the peer does not read. */
  private throttled = false;
  private started = false;
  private closed = false;
  /** Ids of requests received and not yet answered. */
  private readonly unanswered = new Set<string | number>();
  private answeredWaiters: Array<() => void> = [];
  /** Sends waiting for the output to drain. */
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_REQUEST_LINE_BYTES;
    this.maxBacklogBytes = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
    this.log = options.log ?? (() => {});
    this.role = options.role ?? 'server';
    this.endStreams = options.endStreams === true;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('ConchLineTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onStreamError);
    this.output.on('drain', this.onDrain);
    this.output.on('close', this.onDrain);
    if (this.endStreams) {
      this.input.on('close', this.onInputClose);
      if ((this.output as unknown) !== this.input) this.output.on('error', this.onStreamError);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || !isWritable(this.output)) return;
    const line = `${JSON.stringify(message)}\n`;
    markPhase('replying');
    if (!this.output.write(line)) {
      this.throttle();
      await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    }
    if (('result' in message || 'error' in message) && 'id' in message) this.settle(message.id);
  }

  /** Bytes written and not yet taken by the peer (what a slow or stopped peer leaves queued). */
  get backlogBytes(): number {
    return (this.output as { writableLength?: number }).writableLength ?? 0;
  }

  /** False once the transport is closed (by either side). */
  get isOpen(): boolean {
    return this.started && !this.closed;
  }

  /** Number of requests received and not yet answered. */
  get unansweredCount(): number {
    return this.unanswered.size;
  }

  /** The ids of the requests received and not yet answered. */
  unansweredIds(): Array<string | number> {
    return [...this.unanswered];
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onStreamError);
    this.input.off('close', this.onInputClose);
    this.output.off('drain', this.onDrain);
    this.output.off('close', this.onDrain);
    this.onDrain();
    if (this.endStreams) {
      // What is queued goes out if the peer reads it soon; a peer that does not is cut off.
      this.output.end();
      const destroy = setTimeout(() => (this.input as { destroy?: () => void }).destroy?.(), 1000);
      destroy.unref();
    } else if (this.input.listenerCount('data') === 0) this.input.pause();
    this.chunks = [];
    this.onclose?.();
  }

  private settle(id: unknown): void {
    if ((typeof id !== 'string' && typeof id !== 'number') || !this.unanswered.delete(id)) return;
    if (this.unanswered.size > 0) return;
    const waiters = this.answeredWaiters;
    this.answeredWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Stops reading the peer while too much waits to be written to it; reading resumes once it drains. */
  private throttle(): void {
    if (this.throttled || this.backlogBytes <= this.maxBacklogBytes) return;
    this.throttled = true;
    this.input.pause();
  }

  private readonly onDrain = (): void => {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
    if (this.throttled) {
      this.throttled = false;
      if (!this.closed) this.input.resume();
    }
  };

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onInputClose = (): void => {
    void this.close();
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
    this.log(this.role === 'server' ? 'request line too long; dropped' : 'line too long; dropped', {
      limit_bytes: this.maxLineBytes,
      id,
    });
    if (id !== undefined) {
      this.refuse([
        errorReply(
          id,
          INVALID_REQUEST,
          `${this.role === 'server' ? 'Request' : 'Answer'} line too long: over ${this.maxLineBytes} bytes (the limit); it was dropped.`,
        ),
      ]);
    }
  }

  private takeLine(): void {
    markPhase('received');
    const line = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.pending = 0;
    if (line.trim() === '') return;
    const verdict = checkLine(line, this.role === 'server');
    if (verdict.kind === 'message') {
      const message = verdict.message;
      if ('method' in message && 'id' in message) this.unanswered.add(message.id);
      this.onmessage?.(message);
    } else if (verdict.kind === 'reply') this.refuse(verdict.replies);
    else this.log('message dropped', { why: verdict.why });
  }

  /** A server answers a refused line; a client takes the refusal as its own request's error. */
  private refuse(replies: JSONRPCMessage[]): void {
    for (const reply of replies) {
      if (this.role === 'server') {
        this.send(reply).catch((error: unknown) => this.onerror?.(error as Error));
        continue;
      }
      const id = (reply as { id?: Id }).id;
      const error = (reply as { error?: { message?: string } }).error;
      if (id === null || id === undefined || error === undefined)
        this.onerror?.(new Error(error?.message ?? 'A message was refused.'));
      else this.onmessage?.(reply);
    }
  }
}

/** The transport of `conch-mcp`: {@link ConchLineTransport} on stdin and stdout. */
export { ConchLineTransport as ConchStdioTransport };

function isWritable(stream: NodeJS.WritableStream): boolean {
  const s = stream as { destroyed?: boolean; writableEnded?: boolean };
  return s.destroyed !== true && s.writableEnded !== true;
}

/**
 * Decides what to do with one line (already split off, without its newline). `answerArguments` (a server)
 * also refuses `tools/call` arguments that are not an object ({@link checkRequest}).
 */
export function checkLine(line: string, answerArguments = true): LineVerdict {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return {
      kind: 'reply',
      replies: [errorReply(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`)],
    };
  }
  if (Array.isArray(value)) return refuseBatch(value);
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
        replies: [
          errorReply(
            id,
            INVALID_REQUEST,
            'Invalid Request: expected a JSON-RPC 2.0 message {"jsonrpc":"2.0","id":…,"method":"…","params":{…}}.',
          ),
        ],
      };
    }
    message = parsed.data;
  }
  const refusal = answerArguments ? checkRequest(value as Record<string, unknown>) : undefined;
  const id = validId((value as Record<string, unknown>).id);
  if (refusal && id !== undefined) {
    return {
      kind: 'reply',
      replies: [{ jsonrpc: '2.0', id, result: refusal } as unknown as JSONRPCMessage],
    };
  }
  return { kind: 'message', message };
}

/** A batch: `Invalid Request` for each member with an id, or one (id null) when none has one. */
function refuseBatch(members: unknown[]): LineVerdict {
  const why =
    'Invalid Request: batches (JSON arrays) are not supported (MCP 2025-06-18 has none); send each message on its own line.';
  const ids = members
    .map((m) => (isJsonObject(m) && 'method' in m ? validId(m.id) : undefined))
    .filter((id): id is string | number => id !== undefined && id !== null);
  const notificationsOnly =
    members.length > 0 &&
    members.every((m) => isJsonObject(m) && typeof m.method === 'string' && !('id' in m));
  if (ids.length === 0 && notificationsOnly) return { kind: 'drop', why: 'a batch of notifications' };
  return {
    kind: 'reply',
    replies: (ids.length > 0 ? ids : [null]).map((id) => errorReply(id, INVALID_REQUEST, why)),
  };
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

/** A JSON-RPC error answer. */
export function errorReply(id: Id, code: number, message: string): JSONRPCMessage {
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
