/**
 * The per-user daemon: one service (ConchService) whose sessions outlive the CLI invocations and MCP
 * clients that use them. It listens on a unix socket (mode 0600, in a 0700 directory) and speaks MCP
 * JSON-RPC with newline framing: every connection gets its own MCP server over the one shared service.
 *
 * Start-up reaps what a dead daemon (or any dead conch server) left running, so a SIGKILLed daemon's
 * processes do not survive the next start. A stale socket (no daemon answering) is removed. SIGTERM,
 * SIGINT and SIGHUP shut down: every process killed, spill files removed, socket and pid file unlinked.
 */

import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import {
  createConchServer,
  delegateTools,
  SHUTDOWN_DEADLINE_MS,
  sshTools,
  type ToolRegistrar,
  withFastToolCalls,
} from '@conch/mcp';
import {
  createConchService,
  createLogger,
  type Logger,
  type ResolvedConfig,
  resolveConfig,
} from '@conch/service';
import { serveAttach } from './attach-protocol.js';
import { socketAnswers } from './daemon-probe.js';
import { daemonPaths, ensurePrivateDir } from './paths.js';
import { SocketTransport } from './socket-transport.js';

/** Options of {@link runDaemon}. */
export interface DaemonOptions {
  /** A `conch.config.json` (same schema as `conch-mcp --config`). */
  config?: string;
  /** Extra tools every connection gets (e.g. delegate_task). */
  extraTools?: readonly ToolRegistrar[];
}

/**
 * Runs the daemon in this process until it is told to stop. Resolves with the exit code: 0 after a clean
 * stop, or at once when another daemon already answers on the socket.
 */
export async function runDaemon(options: DaemonOptions = {}): Promise<number> {
  const paths = daemonPaths();
  ensurePrivateDir(paths.dir);
  const config: ResolvedConfig = resolveConfig(
    options.config === undefined ? {} : { config: options.config },
  );
  const logger: Logger = createLogger(config.logLevel);
  if (await socketAnswers(paths.socket)) {
    logger.info('a conch daemon already answers; not starting another', { socket: paths.socket });
    return 0;
  }
  if (existsSync(paths.socket)) {
    logger.info('removing a stale socket', { socket: paths.socket });
    unlinkSync(paths.socket);
  }
  // Reaps what a dead daemon (or any dead conch server) left running, then assembles the engine.
  const service = await createConchService(config, logger);
  const tools: ToolRegistrar[] = [delegateTools(), sshTools(), ...(options.extraTools ?? [])];
  const connections = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    const conch = createConchServer({
      service,
      profile: config.profile,
      logger,
      extraTools: tools,
    });
    conch.server.server.onerror = (error) => logger.debug('protocol error', { error: String(error) });
    // `conch attach`: daemon-only live-terminal methods on the same connection (not tools).
    socket.on('close', serveAttach(conch.server.server, service));
    conch.server
      .connect(withFastToolCalls(conch.server, new SocketTransport(socket)))
      .catch((error: unknown) => {
        logger.warn('connection failed', { error: String(error) });
        socket.destroy();
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket is created with the umask: make it 0600 from its first moment.
    const umask = process.umask(0o177);
    server.listen(paths.socket, () => {
      process.umask(umask);
      server.off('error', reject);
      resolve();
    });
  });
  writeFileSync(paths.pidFile, `${process.pid}\n`, { mode: 0o600 });
  logger.info('daemon ready', { pid: process.pid, socket: paths.socket });

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (why: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info('daemon stopping', { why });
      const force = setTimeout(() => resolveExit(0), SHUTDOWN_DEADLINE_MS);
      server.close();
      for (const socket of connections) socket.destroy();
      // Every process killed (SIGKILL after the service's short shutdown grace), spill files removed;
      // OpenCode stops alongside.
      service.close().finally(() => {
        for (const file of [paths.socket, paths.pidFile]) {
          try {
            unlinkSync(file);
          } catch {
            // already gone
          }
        }
        clearTimeout(force);
        logger.info('daemon stopped');
        resolveExit(0);
      });
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
    process.on('unhandledRejection', (reason) =>
      logger.error('unhandled rejection', { error: String(reason) }),
    );
    process.on('uncaughtException', (error) => logger.error('uncaught exception', { error: error.stack }));
  });
}
