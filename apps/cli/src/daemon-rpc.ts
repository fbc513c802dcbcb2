/**
 * The CLI's MCP client of the daemon: JSON-RPC 2.0 over the daemon's socket, one message per line (the
 * framing of MCP's stdio transport), speaking what the CLI uses: the `initialize` handshake, `tools/call`
 * with progress notifications and cancellation, the daemon's `conch/*` methods and notifications, and the
 * daemon's requests to the person (`elicitation/create`, answered on the terminal) and `ping`.
 *
 * Why not the MCP SDK's `Client`: it checks every message against zod and ajv schemas, and building those
 * schemas took most of a short command's start (about 150 ms of `conch exec -- true`'s 380 ms; see
 * docs/performance.md). The daemon's side is the SDK's server, which validates what it receives.
 */

import type { Socket } from 'node:net';

/** The MCP protocol version the CLI asks for (the MCP SDK's latest, which the daemon's SDK server speaks). */
export const CLI_PROTOCOL_VERSION = '2025-11-25';

/** An error answer of the daemon (a JSON-RPC error object). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * Longest line the client takes from the daemon, in characters: a longer one ends the connection (the
 * daemon's answers are bounded by its output budgets, far below this) instead of growing without bound.
 */
export const MAX_ANSWER_LINE_CHARS = 64 * 1024 * 1024;

/** The rejection of a request whose daemon connection closed before the answer came. */
export class ConnectionClosedError extends Error {
  constructor() {
    super('The daemon connection closed.');
    this.name = 'ConnectionClosedError';
  }
}

/** A `tools/call` result, as the daemon sends it. */
export interface ToolCallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A progress notification's payload. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** Aborting it sends `notifications/cancelled` and rejects the request with the signal's reason. */
  signal?: AbortSignal;
  /** Asks for progress notifications (a progress token is sent) and receives them. */
  onprogress?: (progress: Progress) => void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: unknown): void;
  onprogress?: ((progress: Progress) => void) | undefined;
}

type Params = Record<string, unknown>;

/** An MCP client connection to the daemon over a connected socket (see the module doc). */
export class DaemonRpc {
  /** Runs once when the connection has closed (either side). */
  onclose?: () => void;
  readonly #socket: Socket;
  readonly #pending = new Map<number, Pending>();
  readonly #notificationHandlers = new Map<string, (params: Params) => void>();
  readonly #requestHandlers = new Map<string, (params: Params) => Promise<unknown> | unknown>();
  #nextId = 1;
  #buffer = '';
  #closed = false;

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#receive(chunk));
    socket.on('error', () => this.#finish());
    socket.on('close', () => this.#finish());
    this.#requestHandlers.set('ping', () => ({}));
  }

  /**
   * The MCP handshake: `initialize` with the client's name, version and capabilities, then
   * `notifications/initialized`. Resolves with the daemon's `initialize` result.
   */
  async initialize(clientInfo: { name: string; version: string }, capabilities: Params): Promise<Params> {
    const result = await this.request<Params>('initialize', {
      protocolVersion: CLI_PROTOCOL_VERSION,
      capabilities,
      clientInfo,
    });
    this.notify('notifications/initialized');
    return result;
  }

  /** Sends a request and resolves with its result (rejects with an {@link RpcError} for an error answer). */
  request<T = Params>(method: string, params: Params = {}, options: RequestOptions = {}): Promise<T> {
    const { signal, onprogress } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#closed) return Promise.reject(new ConnectionClosedError());
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.notify('notifications/cancelled', { requestId: id, reason: String(signal?.reason ?? '') });
        reject(signal?.reason);
      };
      this.#pending.set(id, {
        resolve: (result) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(result as T);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        onprogress,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      const withToken = onprogress ? { ...params, _meta: { progressToken: id } } : params;
      this.#send({ jsonrpc: '2.0', id, method, params: withToken });
    });
  }

  /** Calls a tool (`tools/call`). */
  callTool(name: string, args: Params, options: RequestOptions = {}): Promise<ToolCallResult> {
    return this.request<ToolCallResult>('tools/call', { name, arguments: args }, options);
  }

  /** Sends a notification. */
  notify(method: string, params?: Params): void {
    this.#send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Handles the daemon's notifications of `method` (one handler per method; later ones replace it). */
  onNotification(method: string, handler: (params: Params) => void): void {
    this.#notificationHandlers.set(method, handler);
  }

  /** Answers the daemon's requests of `method` with what `handler` returns. */
  onRequest(method: string, handler: (params: Params) => Promise<unknown> | unknown): void {
    this.#requestHandlers.set(method, handler);
  }

  /** Closes the connection; pending requests are rejected. */
  async close(): Promise<void> {
    this.#socket.end();
    this.#socket.destroy();
    this.#finish();
  }

  #send(message: Params): void {
    if (this.#closed || this.#socket.destroyed) return;
    this.#socket.write(`${JSON.stringify(message)}\n`);
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    if (this.#buffer.length > MAX_ANSWER_LINE_CHARS && !this.#buffer.includes('\n')) {
      this.#buffer = '';
      this.#socket.destroy();
      this.#finish();
      return;
    }
    for (let at = this.#buffer.indexOf('\n'); at >= 0; at = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, at).replace(/\r$/, '');
      this.#buffer = this.#buffer.slice(at + 1);
      if (line.trim() === '') continue;
      let message: Params;
      try {
        message = JSON.parse(line) as Params;
      } catch {
        continue; // not JSON-RPC: nothing to answer
      }
      this.#dispatch(message);
    }
  }

  #dispatch(message: Params): void {
    const params = (message.params ?? {}) as Params;
    if (typeof message.method === 'string') {
      if (message.id !== undefined) {
        void this.#answer(message.id, message.method, params);
      } else if (message.method === 'notifications/progress') {
        const pending = this.#pending.get(Number(params.progressToken));
        this.#safely(() => pending?.onprogress?.(params as unknown as Progress));
      } else {
        const handler = this.#notificationHandlers.get(message.method);
        this.#safely(() => handler?.(params));
      }
      return;
    }
    const pending = this.#pending.get(Number(message.id));
    if (!pending) return;
    this.#pending.delete(Number(message.id));
    if (message.error && typeof message.error === 'object') {
      const error = message.error as { code?: number; message?: string; data?: unknown };
      pending.reject(new RpcError(error.code ?? -32603, error.message ?? 'Unknown error', error.data));
    } else {
      pending.resolve(message.result);
    }
  }

  /** Runs a notification handler; a malformed notification is dropped (nothing to answer). */
  #safely(handle: () => void): void {
    try {
      handle();
    } catch {
      // dropped
    }
  }

  async #answer(id: unknown, method: string, params: Params): Promise<void> {
    const handler = this.#requestHandlers.get(method);
    if (!handler) {
      this.#send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
      return;
    }
    try {
      this.#send({ jsonrpc: '2.0', id, result: (await handler(params)) ?? {} });
    } catch (error) {
      this.#send({
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: error instanceof Error ? error.message : String(error) },
      });
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    const gone = new ConnectionClosedError();
    for (const pending of this.#pending.values()) pending.reject(gone);
    this.#pending.clear();
    this.onclose?.();
  }
}
