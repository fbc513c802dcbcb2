/**
 * The network of a sandbox whose `network` is a host list (docs/sandbox.md "Network"): the sandbox has no
 * network interface but loopback, and its processes reach the outside only through this HTTP proxy, which
 * conch runs on the host and which connects only to the hosts listed: on Linux on a unix socket (relayed
 * into the sandbox by socat), on macOS on an ephemeral TCP port of 127.0.0.1 (the only address the
 * Seatbelt profile lets the sandbox connect to). HTTPS and any other TCP go through `CONNECT host:port`; plain HTTP requests are
 * forwarded. Anything else is refused with 403 and a line that names the rule.
 */

import { rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

/** True when `host` is one of `hosts` (`*.example.com` matches every name below example.com). */
export function hostAllowed(host: string, hosts: readonly string[]): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return hosts.some((h) => (h.startsWith('*.') ? name.endsWith(h.slice(1)) : name === h));
}

/** `host:port` of a CONNECT request (`[v6]:port` too). */
function targetOf(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!m?.[1] || !m[2]) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1].replace(/^\[(.*)\]$/, '$1'), port } : undefined;
}

function refusal(host: string, hosts: readonly string[]): string {
  return `conch sandbox: host ${host} is not allowed (network: ${hosts.join(', ')})\n`;
}

/** A running proxy; {@link HostProxy.close} stops it and removes its socket. */
export interface HostProxy {
  readonly socketPath: string;
  close(): void;
}

/** A running proxy on 127.0.0.1; {@link LoopbackProxy.close} stops it. */
export interface LoopbackProxy {
  /** Its TCP port on 127.0.0.1. */
  readonly port: number;
  close(): void;
}

/** The proxy's server, not yet listening, and how to stop it with every connection it holds. */
function proxyServer(hosts: readonly string[]): { server: Server; stop(): void } {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('conch sandbox: only absolute http:// URLs and CONNECT are proxied\n');
      return;
    }
    if (url.protocol !== 'http:' || !hostAllowed(url.hostname, hosts)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(refusal(url.hostname, hosts));
      return;
    }
    const upstream = httpRequest(
      {
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port === '' ? 80 : Number(url.port),
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502).end(`conch sandbox: ${error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = targetOf(req.url ?? '');
    if (!target || !hostAllowed(target.host, hosts)) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${refusal(target?.host ?? String(req.url), hosts)}`,
      );
      return;
    }
    const upstream = connect(target.port, target.host);
    track(upstream);
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', (error) => {
      client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\nconch sandbox: ${error.message}\n`);
    });
    client.once('error', () => upstream.destroy());
  });
  return {
    server,
    stop() {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Resolves once `server` listens (`listen` starts it), rejects when it cannot. */
async function listening(server: Server, listen: (ready: () => void) => void): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    listen(() => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
}

/** Starts a proxy on the unix socket `socketPath` that reaches only `hosts`. */
export async function startHostProxy(socketPath: string, hosts: readonly string[]): Promise<HostProxy> {
  const { server, stop } = proxyServer(hosts);
  rmSync(socketPath, { force: true });
  await listening(server, (ready) => server.listen(socketPath, ready));
  return {
    socketPath,
    close() {
      stop();
      rmSync(socketPath, { force: true });
    },
  };
}

/** Starts a proxy on an ephemeral TCP port of 127.0.0.1 that reaches only `hosts`. */
export async function startLoopbackProxy(hosts: readonly string[]): Promise<LoopbackProxy> {
  const { server, stop } = proxyServer(hosts);
  await listening(server, (ready) => server.listen(0, '127.0.0.1', ready));
  return { port: (server.address() as AddressInfo).port, close: stop };
}
