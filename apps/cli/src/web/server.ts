/**
 * The web page's server (`conch web`), run inside the daemon over its one service: the page's own files
 * (HTML, script, styles: no session data, served without the token) and one WebSocket per page (`/ws`),
 * which requires the token, for everything else. The doors' guards are those of `conch mcp --http`
 * (http-guards.ts): the address (127.0.0.1 unless told otherwise), `Host` and `Origin`, the token compared in
 * constant time, the connection cap and the request timeouts. A WebSocket carries the token in a subprotocol
 * (`conch.token.TOKEN`, as a browser cannot set headers on it) or, from another client, an `Authorization:
 * Bearer` header; never in the URL, which lands in logs.
 *
 * Each WebSocket is a JSON-RPC connection read through the same transport guard as the daemon's socket
 * (`ConchLineTransport`: one message per line, its size capped, bad input answered), serving the attach
 * methods of `conch attach` (the same code: a take-over here is a take-over there) and the page's own
 * (protocol.ts). It is a person's connection: the token is handed out only to a person's `conch web`
 * (see web-door.ts). Live output to a page that stops reading is dropped and said, as for `conch attach`;
 * a page that stops answering pings is cut off.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { ConchLineTransport } from '@conch/mcp/line-transport';
import type { ConchService, Logger } from '@conch/service';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createWebSocketStream, type WebSocket, WebSocketServer } from 'ws';
import * as z from 'zod';
import { serveAttach } from '../attach-protocol.js';
import {
  allowedHosts as allowedHostsFor,
  bearerMatches,
  guardConnections,
  hostOrOriginRefusal,
  refuse,
  refuseUpgrade,
  sameToken,
  urlHost,
} from '../http-guards.js';
import { HTTP_DEFAULTS, type HttpLimits } from '../http-limits.js';
import { PAGE_DIR } from '../page-dir.js';
import { CLI_VERSION } from '../version.js';
import type { SupervisionFeed } from './feed.js';
import {
  OUTPUT_PAGE_LINES,
  TOKEN_SUBPROTOCOL_PREFIX,
  WEB_METHODS,
  WEB_SOCKET_PATH,
  WEB_SUBPROTOCOL,
  type WebChanges,
  type WebDaemon,
  type WebPolicy,
} from './protocol.js';
import { StateWatch } from './state.js';

/** Largest message a page may send (keystrokes and small requests; a paste of a megabyte fits). */
export const WEB_MAX_MESSAGE_BYTES = 1024 * 1024;
/** How often the pages are told what changed (at most). */
const CHANGE_TICK_MS = 200;
/** How often a page is pinged; one that has not answered the previous ping by then is cut off. */
const PING_MS = 30_000;

/** The page's files: request path → file name and content type. */
const PAGE_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** What every answer of the page's files carries: nothing cached, framed, sniffed or referred. */
const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** `conch/web/watch` request. */
const WatchRequestSchema = z.object({
  method: z.literal(WEB_METHODS.watch),
  params: z.object({}).loose().optional(),
});
/** `conch/web/output` request. */
const OutputRequestSchema = z.object({
  method: z.literal(WEB_METHODS.output),
  params: z.object({
    command_id: z.string(),
    offset: z.number().int().optional(),
    length: z.number().int().min(1).max(1000).optional(),
  }),
});

/** Options of {@link startWebServer}. */
export interface WebServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  token: string;
  service: ConchService;
  feed: SupervisionFeed;
  policy: WebPolicy;
  daemon: () => WebDaemon;
  logger: Logger;
  /** The connection limits (defaults those of `conch mcp --http`). */
  limits?: Partial<Pick<HttpLimits, 'maxConnections' | 'headersTimeoutS' | 'requestTimeoutS'>>;
  /** Bytes queued for one page beyond which live output is dropped (as for `conch attach`). */
  viewerBacklogBytes?: number;
  /** Where the page's built files are (default {@link PAGE_DIR}). */
  pageDir?: string;
}

/** A running web page server. */
export interface WebServer {
  /** `http://HOST:PORT/` (without the token). */
  readonly url: string;
  /** The address it listens on, as `HOST:PORT`. */
  readonly listen: string;
  readonly token: string;
  /** Stops it: every page is disconnected (their views detached). */
  close(): Promise<void>;
}

/** Reads the page's files; throws naming what is missing (the page is built with the CLI). */
function loadPage(dir: string): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [path, { file, type }] of Object.entries(PAGE_FILES)) {
    try {
      files.set(path, { body: readFileSync(join(dir, file)), type });
    } catch {
      throw new Error(`The web page is not built: ${join(dir, file)} is missing (build the CLI first).`);
    }
  }
  return files;
}

/** The token a WebSocket request carries: in its subprotocols, or (another client) in `Authorization`. */
function upgradeCarriesToken(req: IncomingMessage, token: string): boolean {
  if (bearerMatches(req.headers.authorization, token)) return true;
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  return offered.some(
    (p) =>
      p.startsWith(TOKEN_SUBPROTOCOL_PREFIX) && sameToken(p.slice(TOKEN_SUBPROTOCOL_PREFIX.length), token),
  );
}

/** Starts the page's server (see the module doc). */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const { service, feed, logger, token } = options;
  const limits = { ...HTTP_DEFAULTS, ...options.limits };
  const page = loadPage(options.pageDir ?? PAGE_DIR);
  let allowed = new Set<string>();

  /** The pages watching the state, each with what it was last told. */
  const watchers = new Map<WebSocket, { watch: StateWatch; tell: (changes: WebChanges) => void }>();
  let ticking = false;
  let ticker: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      for (const { watch, tell } of [...watchers.values()]) {
        const changes = await watch.changes();
        if (changes) tell(changes);
      }
    } catch (error) {
      logger.warn('web page: reading the state failed', { error: String(error) });
    } finally {
      ticking = false;
    }
  };
  const stopFeed = feed.onRecord(() => {
    if (watchers.size > 0) setImmediate(() => void tick());
  });
  const watching = (on: boolean) => {
    if (on && ticker === undefined) ticker = setInterval(() => void tick(), CHANGE_TICK_MS);
    if (!on && watchers.size === 0 && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };

  const sockets = new Set<WebSocket>();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: WEB_MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
    handleProtocols: (offered) => (offered.has(WEB_SUBPROTOCOL) ? WEB_SUBPROTOCOL : false),
  });

  /** Serves one page's WebSocket: JSON-RPC with the attach methods and the page's own. */
  const servePage = (ws: WebSocket) => {
    sockets.add(ws);
    const stream = createWebSocketStream(ws, { decodeStrings: false });
    stream.on('error', () => {});
    const transport = new ConchLineTransport(stream, stream, {
      endStreams: true,
      maxLineBytes: WEB_MAX_MESSAGE_BYTES,
      log: (message, fields) => logger.warn(`web page: ${message}`, fields),
    });
    const rpc = new Server({ name: 'conch-web', version: CLI_VERSION }, { capabilities: {} });
    rpc.onerror = (error) => logger.debug('web page: protocol error', { error: String(error) });
    const detachAll = serveAttach(rpc, service, {
      backlogBytes: () => transport.backlogBytes + ws.bufferedAmount,
      isRelay: () => false,
      // The token was handed out to a person's own `conch web` only (web-door.ts).
      fromConchTerminal: () => false,
      onAgentCommand: (command) => feed.noteCommand(command),
      ...(options.viewerBacklogBytes === undefined ? {} : { maxBacklogBytes: options.viewerBacklogBytes }),
    });
    rpc.setRequestHandler(WatchRequestSchema, async () => {
      const watch = new StateWatch({ service, feed, policy: options.policy, daemon: options.daemon });
      const state = await watch.state();
      watchers.set(ws, {
        watch,
        tell: (changes) =>
          void rpc.notification({ method: WEB_METHODS.changed, params: { ...changes } }).catch(() => {}),
      });
      watching(true);
      return state as unknown as Record<string, unknown>;
    });
    rpc.setRequestHandler(OutputRequestSchema, async (request) => {
      const { command_id, offset, length } = request.params;
      const result = await service.readOutput({
        command_id,
        offset: offset ?? -OUTPUT_PAGE_LINES,
        length: length ?? OUTPUT_PAGE_LINES,
      });
      // A page's text starts with its header line (`[lines 300-499 of 500, 0 remaining]`): apart here.
      const newline = result.output.indexOf('\n');
      return {
        ...result,
        output: newline < 0 ? '' : result.output.slice(newline + 1),
        page_header: newline < 0 ? result.output : result.output.slice(0, newline),
      } as unknown as Record<string, unknown>;
    });
    let alive = true;
    ws.on('pong', () => {
      alive = true;
    });
    const pinger = setInterval(() => {
      if (!alive) {
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, PING_MS);
    ws.on('close', () => {
      clearInterval(pinger);
      sockets.delete(ws);
      watchers.delete(ws);
      watching(false);
      detachAll();
      void transport.close();
    });
    rpc.connect(transport).catch((error: unknown) => {
      logger.warn('web page: connection failed', { error: String(error) });
      ws.terminate();
    });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const refusal = hostOrOriginRefusal(req.headers, allowed);
    if (refusal !== undefined) {
      refuse(res, 403, refusal);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
      res.end('Only GET: the page reads everything else over its WebSocket.\n');
      req.resume();
      return;
    }
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    const file = page.get(path === '/index.html' ? '/' : path);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not found.\n');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, ...PAGE_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  });
  const guard = guardConnections(server, limits);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const refusal = hostOrOriginRefusal(req.headers, allowed);
    if (refusal !== undefined) return refuseUpgrade(socket, 403, 'Forbidden', refusal);
    if (new URL(req.url ?? '/', 'http://page').pathname !== WEB_SOCKET_PATH)
      return refuseUpgrade(socket, 404, 'Not Found', `Only ${WEB_SOCKET_PATH} is a WebSocket here.`);
    if (!upgradeCarriesToken(req, token))
      return refuseUpgrade(
        socket,
        401,
        'Unauthorized',
        `A token is required (the subprotocol ${TOKEN_SUBPROTOCOL_PREFIX}TOKEN, or Authorization: Bearer TOKEN).`,
      );
    wss.handleUpgrade(req, socket, head, (ws) => {
      guard.inUse(socket);
      servePage(ws);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  allowed = allowedHostsFor(options.host, port);
  const listen = `${urlHost(options.host)}:${port}`;
  const url = `http://${listen}/`;
  logger.info('web page served', { url });

  let closing: Promise<void> | undefined;
  return {
    url,
    listen,
    token,
    close() {
      closing ??= new Promise<void>((resolve) => {
        stopFeed();
        if (ticker !== undefined) clearInterval(ticker);
        for (const ws of sockets) ws.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
        logger.info('web page no longer served', { url });
      });
      return closing;
    },
  };
}
