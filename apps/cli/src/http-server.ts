/**
 * `conch mcp --http HOST:PORT`: MCP over Streamable HTTP (the SDK's transport, one MCP session per
 * client, all on one engine). Every request must carry `Authorization: Bearer TOKEN` (401 otherwise);
 * the token is generated and printed to stderr when none is given. The server binds 127.0.0.1 unless
 * told otherwise, and refuses (403) a Host header that is not the address it serves, and an Origin that
 * is not a local page of it: a web page in the person's browser cannot reach it by DNS rebinding.
 */

import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createConchServer, SHUTDOWN_DEADLINE_MS, sshTools } from '@conch/mcp';
import { createConchService, createLogger, type ResolvedConfig } from '@conch/service';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** The configuration `conch mcp --http` resolves from its flags (loaded with this module, not at start-up). */
export { ConfigError, resolveConfig } from '@conch/service';

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** `HOST:PORT` (`PORT` alone binds 127.0.0.1; port 0 picks a free one). */
  listen: string;
  /** The bearer token; generated when absent. */
  token?: string;
  /** The resolved server configuration (`conch mcp`'s flags), e.g. the profile. */
  config: ResolvedConfig;
  /** Called once listening, with the URL (tests read it from stderr). */
  onListening?: (url: string) => void;
}

/** Parses `HOST:PORT`, `[V6]:PORT` or `PORT`; throws a message naming the value. */
export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) {
    throw new Error(`--http expects HOST:PORT or PORT (e.g. 127.0.0.1:7777), got ${JSON.stringify(value)}.`);
  }
  return { host: (match[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port };
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** Serves MCP over Streamable HTTP until SIGINT/SIGTERM; resolves with the exit code. */
export async function serveHttp(options: HttpOptions): Promise<number> {
  const { host, port } = parseListen(options.listen);
  const config = options.config;
  const logger = createLogger(config.logLevel);
  const token = options.token ?? randomBytes(24).toString('base64url');
  if (!options.token) process.stderr.write(`conch mcp: bearer token: ${token}\n`);
  const service = await createConchService(config, logger, { reap: false });
  const tools = [sshTools()];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts = new Set<string>();

  const server = createServer((req, res) => {
    void (async () => {
      if (!allowedHosts.has((req.headers.host ?? '').toLowerCase())) {
        refuse(res, 403, `Host ${JSON.stringify(req.headers.host ?? '')} is not served here.`);
        return;
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase())) {
        refuse(res, 403, `Origin ${JSON.stringify(origin)} is not allowed.`);
        return;
      }
      if (!tokenMatches(req.headers.authorization, token)) {
        refuse(res, 401, 'A bearer token is required (Authorization: Bearer TOKEN).');
        return;
      }
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (req.method !== 'POST' || !isInitializeRequest(body)) {
          refuse(
            res,
            typeof sessionId === 'string' ? 404 : 400,
            'Unknown or missing MCP session; initialize first.',
          );
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        const conch = createConchServer({
          service,
          profile: config.profile,
          logger,
          extraTools: tools,
        });
        await conch.server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      logger.warn('HTTP request failed', { error: String(error) });
      if (!res.headersSent)
        refuse(res, 400, error instanceof SyntaxError ? 'The body is not JSON.' : 'Bad request.');
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  allowedHosts = new Set([
    `${hostPart}:${actualPort}`,
    `localhost:${actualPort}`,
    `127.0.0.1:${actualPort}`,
    `[::1]:${actualPort}`,
  ]);
  const url = `http://${hostPart}:${actualPort}/mcp`;
  process.stderr.write(`conch mcp: serving MCP over Streamable HTTP at ${url}\n`);
  options.onListening?.(url);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      const force = setTimeout(() => resolveExit(0), SHUTDOWN_DEADLINE_MS);
      server.close();
      server.closeAllConnections();
      for (const transport of transports.values()) void transport.close();
      service.close().finally(() => {
        clearTimeout(force);
        resolveExit(0);
      });
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  });
}
