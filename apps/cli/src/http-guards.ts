/**
 * The guards of conch's HTTP doors (`conch mcp --http` and the web page of `conch web`), defined once:
 *
 * - the address: `HOST:PORT`, `[V6]:PORT` or `PORT` (127.0.0.1 unless another host is given);
 * - the `Host` header must name the address served (or a loopback name of its port), and an `Origin`, when
 *   sent, must be a page of it: a web page elsewhere in the person's browser cannot reach the door by DNS
 *   rebinding or cross-site requests (403 otherwise);
 * - the bearer token, compared in constant time (401 otherwise);
 * - the connections: at most `maxConnections` at once (beyond it the oldest one that never sent a request
 *   is closed, then the oldest idle one between requests; a connection upgraded to a WebSocket is in use
 *   for as long as it lives), and a connection must send its request headers, and then its whole request,
 *   promptly.
 */

import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Parses `HOST:PORT`, `[V6]:PORT` or `PORT`; throws a message naming the value and `flag`. */
export function parseListen(value: string, flag = '--http'): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) {
    throw new Error(`${flag} expects HOST:PORT or PORT (e.g. 127.0.0.1:7777), got ${JSON.stringify(value)}.`);
  }
  return { host: (match[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port };
}

/** The host as it appears in a URL or a `Host` header (an IPv6 address in brackets). */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** The `Host` values (lower case) that name a door listening on `host`:`port`. */
export function allowedHosts(host: string, port: number): Set<string> {
  return new Set([
    `${urlHost(host).toLowerCase()}:${port}`,
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
  ]);
}

/** Why a request's `Host` or `Origin` is refused (403), or undefined when both are fine. */
export function hostOrOriginRefusal(headers: IncomingHttpHeaders, allowed: Set<string>): string | undefined {
  if (!allowed.has((headers.host ?? '').toLowerCase()))
    return `Host ${JSON.stringify(headers.host ?? '')} is not served here.`;
  const origin = headers.origin;
  if (origin !== undefined && !allowed.has(origin.replace(/^https?:\/\//, '').toLowerCase()))
    return `Origin ${JSON.stringify(origin)} is not allowed.`;
  return undefined;
}

/** True when `given` is the token (compared in constant time). */
export function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True when an `Authorization` header carries `Bearer TOKEN`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  return sameToken(/^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '', token);
}

/** The JSON body of a refusal (a JSON-RPC error without id, as the MCP transport answers). */
function refusalBody(message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null });
}

/** Answers a request with a refusal. */
export function refuse(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(refusalBody(message));
}

/** Answers an upgrade request (a WebSocket) with a refusal and closes its connection. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string, message: string): void {
  const body = refusalBody(message);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n${status === 401 ? 'WWW-Authenticate: Bearer\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The connection limits of an HTTP door. */
export interface ConnectionLimits {
  /** Most connections at once. */
  maxConnections: number;
  /** How long a connection may take to send its request headers (seconds). */
  headersTimeoutS: number;
  /** How long a connection may take to send a whole request (seconds). */
  requestTimeoutS: number;
}

/** What {@link guardConnections} keeps of an HTTP server's connections. */
export interface ConnectionGuard {
  /** Marks a connection as in use for as long as it lives (one upgraded to a WebSocket). */
  inUse(socket: Duplex): void;
}

/** Bounds the connections of `server` (see the module doc). */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  /** Open connections, oldest first: whether each is in a request now, and how many it sent. */
  const connections = new Map<Socket, { busy: boolean; requests: number }>();
  server.headersTimeout = limits.headersTimeoutS * 1000;
  server.requestTimeout = limits.requestTimeoutS * 1000;
  server.on('request', (req, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (!state) return;
    state.busy = true;
    state.requests++;
    res.on('close', () => {
      state.busy = false;
    });
  });
  server.on('connection', (socket: Socket) => {
    if (connections.size >= limits.maxConnections) {
      // The oldest that never sent a request goes first, then the oldest idle one between requests.
      const all = [...connections];
      const victim =
        all.find(([, state]) => state.requests === 0)?.[0] ?? all.find(([, state]) => !state.busy)?.[0];
      if (victim) {
        connections.delete(victim);
        victim.destroy();
      } else {
        socket.destroy();
        return;
      }
    }
    connections.set(socket, { busy: false, requests: 0 });
    socket.on('close', () => connections.delete(socket));
  });
  return {
    inUse(socket) {
      const state = connections.get(socket as Socket);
      if (!state) return;
      state.busy = true;
      state.requests++;
    },
  };
}
