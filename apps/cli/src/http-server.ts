/**
 * `conch mcp --http HOST:PORT`: MCP over Streamable HTTP (the SDK's transport, one MCP session per
 * client, all on one engine). Every request must carry `Authorization: Bearer TOKEN` (401 otherwise);
 * the token comes from `$CONCH_MCP_TOKEN` or `--token-file`, or is generated and printed to stderr (never
 * from argv, which every local user can read). The server binds 127.0.0.1 unless told otherwise, and
 * refuses (403) a Host header that is not the address it serves, and an Origin that is not a local page of
 * it: a web page in the person's browser cannot reach it by DNS rebinding.
 *
 * Its resources are bounded ({@link HTTP_DEFAULTS}, each configurable): an MCP session idle for longer than
 * the idle timeout is closed, and beyond the session cap the least recently used idle one is; a body over
 * the cap is refused (413) as soon as it passes it, without being kept; beyond the connection cap the
 * oldest connection that is not in the middle of a request is closed to make room (so half-open
 * connections cannot starve the server of file descriptors), and a connection must send its request
 * headers, and then its whole request, promptly. The Host, Origin, token and connection guards are
 * http-guards.ts, shared with the web page (`conch web`).
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { containerTools, createConchServer, SHUTDOWN_DEADLINE_MS, sshTools } from '@conch/mcp';
import {
  type CliSettings,
  ConfigError,
  createConchService,
  createLogger,
  type ResolvedConfig,
  resolveConfig,
} from '@conch/service';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  allowedHosts as allowedHostsFor,
  bearerMatches,
  guardConnections,
  hostOrOriginRefusal,
  parseListen,
  refuse,
  urlHost,
} from './http-guards.js';
import { HTTP_DEFAULTS, type HttpLimits } from './http-limits.js';

export { parseListen };

/**
 * The configuration of `conch mcp --http` from its flags, loaded with the HTTP door rather than at the
 * CLI's start (see program.ts); a configuration error comes back as `{ usage }`, its message.
 */
export function httpConfig(settings: CliSettings): { config: ResolvedConfig } | { usage: string } {
  try {
    return { config: resolveConfig(settings) };
  } catch (error) {
    if (error instanceof ConfigError) return { usage: error.message };
    throw error;
  }
}

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** `HOST:PORT` (`PORT` alone binds 127.0.0.1; port 0 picks a free one). */
  listen: string;
  /** The bearer token; generated (and printed) when absent. */
  token?: string;
  /** The resolved server configuration (`conch mcp`'s flags), e.g. the profile. */
  config: ResolvedConfig;
  /** Resource limits (defaults {@link HTTP_DEFAULTS}). */
  limits?: Partial<HttpLimits>;
  /** Called once listening, with the URL (tests read it from stderr). */
  onListening?: (url: string) => void;
}

/** A body over the cap (see {@link readJson}). */
class BodyTooLarge extends Error {}

/**
 * Reads a JSON body of at most `maxBytes`; rejects with {@link BodyTooLarge} as soon as it passes the cap.
 * What follows is read and discarded, not kept (the client may still be sending it: closing the connection
 * would cut it off before it reads the 413 answer).
 */
function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new BodyTooLarge());
      return;
    }
    let chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > maxBytes) {
        over = true;
        chunks = [];
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text ? JSON.parse(text) : undefined);
      } catch (error) {
        reject(error);
      }
    });
    req.on('error', reject);
  });
}

/** One MCP session of the HTTP face. */
interface McpSession {
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
  /** Requests being handled now (a session in use is never closed for being idle). */
  active: number;
}

/** Serves MCP over Streamable HTTP until SIGINT/SIGTERM; resolves with the exit code. */
export async function serveHttp(options: HttpOptions): Promise<number> {
  const { host, port } = parseListen(options.listen);
  const limits: HttpLimits = { ...HTTP_DEFAULTS, ...options.limits };
  const config = options.config;
  const logger = createLogger(config.logLevel);
  const token = options.token ?? randomBytes(24).toString('base64url');
  if (!options.token) process.stderr.write(`conch mcp: bearer token: ${token}\n`);
  const service = await createConchService(config, logger, { reap: false });
  const tools = [sshTools(), containerTools()];
  const sessions = new Map<string, McpSession>();
  let allowedHosts = new Set<string>();

  const closeSession = (id: string, why: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    logger.info('MCP session closed', { why });
    void session.transport.close().catch(() => {});
  };
  /** Makes room for one more session: the least recently used idle one goes; false when all are busy. */
  const roomForSession = (): boolean => {
    if (sessions.size < limits.maxSessions) return true;
    const idle = [...sessions]
      .filter(([, s]) => s.active === 0)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    if (!oldest) return false;
    closeSession(oldest[0], 'the session cap was reached and it was the least recently used');
    return true;
  };
  const sweeper = setInterval(
    () => {
      const cutoff = Date.now() - limits.idleTimeoutS * 1000;
      for (const [id, session] of sessions)
        if (session.active === 0 && session.lastUsed < cutoff) closeSession(id, 'idle');
    },
    Math.min(60_000, Math.max(250, (limits.idleTimeoutS * 1000) / 4)),
  );
  sweeper.unref();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refusal = hostOrOriginRefusal(req.headers, allowedHosts);
    if (refusal !== undefined) {
      refuse(res, 403, refusal);
      return;
    }
    if (!bearerMatches(req.headers.authorization, token)) {
      refuse(res, 401, 'A bearer token is required (Authorization: Bearer TOKEN).');
      return;
    }
    const body = req.method === 'POST' ? await readJson(req, limits.maxBodyBytes) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!session) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        refuse(
          res,
          typeof sessionId === 'string' ? 404 : 400,
          typeof sessionId === 'string'
            ? 'Unknown or expired MCP session; initialize again.'
            : 'Missing MCP session; initialize first.',
        );
        return;
      }
      if (!roomForSession()) {
        refuse(res, 503, `Too many MCP sessions in use (the cap is ${limits.maxSessions}); try again later.`);
        return;
      }
      const created: McpSession = {
        transport: new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, created);
          },
        }),
        lastUsed: Date.now(),
        active: 0,
      };
      created.transport.onclose = () => {
        const id = created.transport.sessionId;
        if (id && sessions.get(id) === created) sessions.delete(id);
      };
      const conch = createConchServer({ service, profile: config.profile, logger, extraTools: tools });
      await conch.server.connect(created.transport);
      session = created;
    }
    session.active++;
    session.lastUsed = Date.now();
    try {
      await session.transport.handleRequest(req, res, body);
    } finally {
      session.active--;
      session.lastUsed = Date.now();
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof BodyTooLarge) {
        refuse(res, 413, `The request body is over ${limits.maxBodyBytes} bytes (the limit).`);
        req.resume();
        return;
      }
      logger.warn('HTTP request failed', { error: String(error) });
      refuse(res, 400, error instanceof SyntaxError ? 'The body is not JSON.' : 'Bad request.');
    });
  });
  guardConnections(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  allowedHosts = allowedHostsFor(host, actualPort);
  const url = `http://${urlHost(host)}:${actualPort}/mcp`;
  process.stderr.write(`conch mcp: serving MCP over Streamable HTTP at ${url}\n`);
  options.onListening?.(url);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      clearInterval(sweeper);
      const force = setTimeout(() => resolveExit(0), SHUTDOWN_DEADLINE_MS);
      server.close();
      server.closeAllConnections();
      for (const session of sessions.values()) void session.transport.close();
      service.close().finally(() => {
        clearTimeout(force);
        resolveExit(0);
      });
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  });
}
