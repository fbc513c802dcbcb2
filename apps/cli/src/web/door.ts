/**
 * The daemon's side of `conch web`: the `conch/web` method on the daemon's socket, which starts (or stops)
 * the web page's server inside the daemon and hands out its token. The server itself (server.ts, with the
 * WebSocket library) is loaded the first time a page is asked for, never on the daemon's start path.
 *
 * Who gets the token: the page can type into sessions once a person takes over, and keystrokes are not
 * checked by the command policy. So `conch/web` is refused on the relay (`conch mcp --daemon`, an agent's
 * door), and under a command policy it is refused to a client inside a terminal conch manages (an agent's
 * command) or one that does not say which process it is, as a take-over by `conch attach` is; the refusal is
 * recorded in the audit log. Whoever holds the token is then a person, and the page's take-over follows the
 * engine's rules for a person's.
 */

import { randomBytes } from 'node:crypto';
import type { AuditSink } from '@conch/core';
import type { ConchService, Logger } from '@conch/service';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import * as z from 'zod';
import { parseListen, urlHost } from '../http-guards.js';
import type { SupervisionFeed } from './feed.js';
import { WEB_METHODS, type WebDaemon, type WebPolicy, type WebServeResult } from './protocol.js';
import type { WebServer } from './server.js';

/** The address the page is served on unless another is asked for: loopback, a free port. */
export const DEFAULT_WEB_LISTEN = '127.0.0.1:0';

/** `conch/web` request. */
export const WebServeRequestSchema = z.object({
  method: z.literal(WEB_METHODS.serve),
  params: z.object({
    /** `HOST:PORT` (a bare port binds 127.0.0.1; port 0 picks a free one). */
    listen: z.string().max(300).optional(),
    /** The token to require (default: the one already in use, else a new random one). */
    token: z.string().max(512).optional(),
    /** Stop serving the page. */
    stop: z.boolean().optional(),
    client_pid: z.number().int().optional(),
  }),
});
/** `conch/web` result. */
export const WebServeResultSchema = z.object({
  url: z.string(),
  token: z.string(),
  started: z.boolean(),
  stopped: z.boolean().optional(),
});

/** What the door needs of the daemon. */
export interface WebDoorContext {
  service: ConchService;
  feed: SupervisionFeed;
  /** The engine's audit sink (where a refusal is recorded). */
  audit: AuditSink;
  policy: WebPolicy;
  daemon: () => WebDaemon;
  logger: Logger;
  viewerBacklogBytes?: number;
}

/** A token's characters: those a WebSocket subprotocol may carry. */
const TOKEN_CHARS = /^[A-Za-z0-9._~-]+$/;
/** The shortest token accepted (a generated one has 32 characters). */
export const MIN_TOKEN_CHARS = 16;

/** What is wrong with a token a person chose, or undefined when it will do. */
export function tokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN_CHARS)
    return `The token must have at least ${MIN_TOKEN_CHARS} characters (it has ${token.length}).`;
  if (!TOKEN_CHARS.test(token))
    return 'The token may hold only letters, digits and . _ ~ - (a WebSocket subprotocol carries it).';
  return undefined;
}

/** The web page of one daemon: at most one server, started and stopped through `conch/web`. */
export class WebDoor {
  #server: WebServer | undefined;
  /** Requests are handled one at a time (a start and a stop must not cross). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly context: WebDoorContext) {}

  /** Registers `conch/web` on one daemon connection; `isRelay` says whether it is the relay's. */
  register(server: Server, isRelay: () => boolean): void {
    server.setRequestHandler(WebServeRequestSchema, (request) => {
      const next = this.#queue.then(() => this.#serve(request.params, isRelay()));
      this.#queue = next.catch(() => {});
      return next.then((result) => ({ ...result }));
    });
  }

  async #serve(
    params: z.infer<typeof WebServeRequestSchema>['params'],
    relay: boolean,
  ): Promise<WebServeResult> {
    if (relay)
      throw new Error(
        "conch/web is refused on this connection: it is the MCP relay (conch mcp --daemon), an agent's door, and the page lets a person type into sessions. Run conch web in your own terminal.",
      );
    const { policy } = this.context;
    if (policy.active && (await this.context.service.clientInConchTerminal(params.client_pid))) {
      const reason =
        'serving the web page to a client inside a terminal conch manages (or one that does not say which process it is): its token would let an agent type into sessions around the command policy';
      this.context.audit.record({ kind: 'attach', input: 'conch web', decision: 'deny', reason });
      throw new Error(`Denied by policy: ${reason}. Run conch web in your own terminal.`);
    }
    if (params.stop) {
      const running = this.#server;
      this.#server = undefined;
      await running?.close();
      return { url: running?.url ?? '', token: '', started: false, stopped: running !== undefined };
    }
    const problem = params.token === undefined ? undefined : tokenProblem(params.token);
    if (problem !== undefined) throw new Error(problem);
    const listen = parseListen(params.listen ?? DEFAULT_WEB_LISTEN);
    const current = this.#server;
    if (current) {
      const host = `${urlHost(listen.host)}:`;
      const sameAddress =
        params.listen === undefined ||
        current.listen === `${host}${listen.port}` ||
        (listen.port === 0 && current.listen.startsWith(host));
      const sameToken = params.token === undefined || params.token === current.token;
      if (sameAddress && sameToken) return { url: current.url, token: current.token, started: false };
      this.#server = undefined;
      await current.close();
    }
    const { startWebServer } = await import('./server.js');
    const started = await startWebServer({
      host: listen.host,
      port: listen.port,
      token: params.token ?? current?.token ?? randomBytes(24).toString('base64url'),
      service: this.context.service,
      feed: this.context.feed,
      policy: this.context.policy,
      daemon: this.context.daemon,
      logger: this.context.logger,
      ...(this.context.viewerBacklogBytes === undefined
        ? {}
        : { viewerBacklogBytes: this.context.viewerBacklogBytes }),
    });
    this.#server = started;
    return { url: started.url, token: started.token, started: true };
  }

  /** Stops the page's server, if it runs. */
  async close(): Promise<void> {
    const running = this.#server;
    this.#server = undefined;
    await running?.close();
  }
}
