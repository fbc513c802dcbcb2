/**
 * The page's end of its one WebSocket to the daemon: JSON-RPC 2.0, one message per line (as every door of
 * the daemon speaks), the token offered as a subprotocol (a browser cannot set headers on a WebSocket, and a
 * token in the URL would land in logs).
 */

import { TOKEN_SUBPROTOCOL_PREFIX, WEB_SOCKET_PATH, WEB_SUBPROTOCOL } from '../../src/web/protocol.js';

type Params = Record<string, unknown>;

/** An error the daemon answered a request with. */
export class RpcError extends Error {}

/** A JSON-RPC connection to the daemon over the page's WebSocket. */
export class PageConnection {
  readonly #socket: WebSocket;
  #nextId = 1;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  readonly #handlers = new Map<string, (params: Params) => void>();
  #closed = false;
  /** Resolves once the connection is open; rejects when it could not be opened. */
  readonly opened: Promise<void>;
  /** Called once when the connection ends (`opened` tells whether it ever opened). */
  onclose: () => void = () => {};

  constructor(token: string, origin: string = location.origin) {
    const url = `${origin.replace(/^http/, 'ws')}${WEB_SOCKET_PATH}`;
    this.#socket = new WebSocket(url, [WEB_SUBPROTOCOL, `${TOKEN_SUBPROTOCOL_PREFIX}${token}`]);
    this.opened = new Promise((resolve, reject) => {
      this.#socket.addEventListener('open', () => resolve());
      this.#socket.addEventListener('close', () => reject(new Error('The connection was refused.')));
    });
    this.opened.catch(() => {});
    this.#socket.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') return;
      for (const line of event.data.split('\n')) if (line.trim() !== '') this.#take(line);
    });
    this.#socket.addEventListener('close', () => {
      this.#closed = true;
      for (const { reject } of this.#pending.values())
        reject(new Error('The connection to the daemon closed.'));
      this.#pending.clear();
      this.onclose();
    });
  }

  /** Handles the notifications named `method`. */
  on(method: string, handler: (params: Params) => void): void {
    this.#handlers.set(method, handler);
  }

  /** Sends a request and resolves with its result. */
  request<T = Params>(method: string, params: Params = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('The connection to the daemon is closed.'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#socket.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /** Closes the connection. */
  close(): void {
    this.#socket.close();
  }

  #take(line: string): void {
    let message: {
      id?: unknown;
      method?: unknown;
      params?: Params;
      result?: unknown;
      error?: { message?: string };
    };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof message.method === 'string') {
      this.#handlers.get(message.method)?.(message.params ?? {});
      return;
    }
    const pending = typeof message.id === 'number' ? this.#pending.get(message.id) : undefined;
    if (!pending) return;
    this.#pending.delete(message.id as number);
    if (message.error)
      pending.reject(
        new RpcError((message.error.message ?? 'The request failed.').replace(/^MCP error -?\d+: /, '')),
      );
    else pending.resolve(message.result);
  }
}
