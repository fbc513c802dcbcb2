/**
 * The per-user daemon: one service (ConchService) whose sessions outlive the CLI invocations and MCP
 * clients that use them. It listens on a unix socket (mode 0600, in a 0700 directory) and speaks MCP
 * JSON-RPC with newline framing: every connection gets its own MCP server over the one shared service, read
 * through the same transport guard as `conch-mcp`'s stdio (`ConchLineTransport`: line size, parse errors,
 * batches, bad params, a peer that does not read).
 *
 * Its life: it resolves its settings' relative paths, then works from `/` (a directory that cannot vanish);
 * new sessions start in the configured directory, else the home directory. Start-up reaps what a dead
 * daemon (or any dead conch server) left running, so a SIGKILLed daemon's processes do not survive the next
 * start; a stale socket (no daemon answering) is removed; a daemon that replaces another one says so in the
 * first result of its default session (`new_shell`). It stops on SIGTERM, SIGINT and SIGHUP, and when its
 * socket is removed or replaced (as logind does at logout): every process killed, spill files removed,
 * its own socket and pid file unlinked (never another daemon's), and `daemon.stopped` written.
 */

import { existsSync, readFileSync, statSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { homedir } from 'node:os';
import {
  ConchLineTransport,
  containerTools,
  createConchServer,
  delegateTools,
  SHUTDOWN_DEADLINE_MS,
  sshTools,
  type ToolRegistrar,
  withDirectToolCalls,
} from '@conch/mcp';
import {
  type CliSettings,
  ConfigError,
  createConchService,
  createLogger,
  defaultGuards,
  type Logger,
  type ResolvedConfig,
  resolveConfig,
} from '@conch/service';
import { serveAttach } from './attach-protocol.js';
import { previousDaemon, socketAnswers } from './daemon-probe.js';
import { RelayNotificationSchema, StatusRequestSchema } from './daemon-schemas.js';
import { type DaemonPaths, daemonPaths, ensurePrivateDir } from './paths.js';
import { CLI_VERSION } from './version.js';
import { WebDoor } from './web/door.js';
import { SupervisionFeed } from './web/feed.js';
import type { WebPolicy } from './web/protocol.js';

/** How long a connection whose peer ended its input may run on to answer what it already asked. */
const END_OF_INPUT_GRACE_MS = 2500;
/** How often the daemon checks that its socket is still its own (besides watching its directory). */
const SOCKET_CHECK_MS = 5000;

/** Options of {@link runDaemon}. */
export interface DaemonOptions {
  /** The server settings (`conch daemon run`'s flags: those of `conch-mcp`, e.g. `--config`). */
  settings?: CliSettings;
  /** Extra tools every connection gets (e.g. delegate_task). */
  extraTools?: readonly ToolRegistrar[];
  /** Bytes queued for one connection beyond which live view and follow output is dropped. */
  viewerBacklogBytes?: number;
}

/**
 * The inode of the socket file, or undefined when it is gone. Read as a bigint stat on purpose: Node's
 * `realpathSync` (which module resolution uses) reads the shared array of the last non-bigint stat, and
 * after a stat of a socket it stops resolving symlinks (nodejs/node#51142), so a later `import()` in the
 * daemon would load a package from its pnpm symlink and fail to find the package's own dependencies.
 */
function socketInode(path: string): bigint | undefined {
  try {
    return statSync(path, { bigint: true }).ino;
  } catch {
    return undefined;
  }
}

/** Removes this daemon's own files: the socket when it is still ours, the pid file when it names us. */
function removeOwnFiles(paths: DaemonPaths, inode: bigint | undefined): void {
  try {
    if (inode !== undefined && socketInode(paths.socket) === inode) unlinkSync(paths.socket);
  } catch {
    // already gone
  }
  try {
    if (readFileSync(paths.pidFile, 'utf8').trim() === String(process.pid)) unlinkSync(paths.pidFile);
  } catch {
    // already gone
  }
}

/** The command policy as the web page shows it. */
function webPolicy(config: ResolvedConfig, active: boolean): WebPolicy {
  const text = (rule: string | object) => (typeof rule === 'string' ? rule : JSON.stringify(rule));
  return {
    active,
    allow: config.policy.allow.map(text),
    deny: config.policy.deny.map(text),
    ...(config.auditLog === undefined ? {} : { audit_log: config.auditLog }),
  };
}

/** Serves one connection: an MCP server over the shared service, plus the daemon-only methods. */
function serveConnection(
  socket: Socket,
  context: {
    service: Awaited<ReturnType<typeof createConchService>>;
    config: ResolvedConfig;
    logger: Logger;
    tools: readonly ToolRegistrar[];
    identity: () => Record<string, unknown>;
    viewerBacklogBytes: number | undefined;
    feed: SupervisionFeed;
    web: WebDoor;
  },
): void {
  const { service, config, logger } = context;
  const conch = createConchServer({ service, profile: config.profile, logger, extraTools: context.tools });
  conch.server.server.onerror = (error) => logger.debug('protocol error', { error: String(error) });
  const transport = new ConchLineTransport(socket, socket, {
    endStreams: true,
    log: (message, fields) => logger.warn(message, fields),
  });
  let relay = false;
  conch.server.server.setNotificationHandler(RelayNotificationSchema, () => {
    relay = true;
  });
  conch.server.server.setRequestHandler(StatusRequestSchema, () => context.identity());
  // `conch attach` and streaming `conch exec`: daemon-only live-terminal methods on the same connection.
  const detachAll = serveAttach(conch.server.server, service, {
    backlogBytes: () => transport.backlogBytes,
    isRelay: () => relay,
    onAgentCommand: (command) => context.feed.noteCommand(command),
    ...(context.viewerBacklogBytes === undefined ? {} : { maxBacklogBytes: context.viewerBacklogBytes }),
  });
  // `conch web`: the page of every session, served by this daemon on request.
  context.web.register(conch.server.server, () => relay);
  socket.on('close', detachAll);
  // The peer ended its input: what it asked before still gets its answers, then the connection ends.
  socket.on('end', () => {
    void transport.whenAnswered(END_OF_INPUT_GRACE_MS).then(() => transport.close());
  });
  conch.server.connect(withDirectToolCalls(conch.server, transport)).catch((error: unknown) => {
    logger.warn('connection failed', { error: String(error) });
    socket.destroy();
  });
}

/**
 * Runs the daemon in this process until it is told to stop. Resolves with the exit code: 0 after a clean
 * stop, or at once when another daemon already answers on the socket; 2 for a bad setting.
 */
export async function runDaemon(options: DaemonOptions = {}): Promise<number> {
  const paths = daemonPaths();
  ensurePrivateDir(paths.dir);
  let config: ResolvedConfig;
  try {
    config = resolveConfig(options.settings ?? {});
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`conch daemon: ${error.message}\n`);
    return 2;
  }
  // Relative paths are resolved by now: work from a directory that cannot vanish, start sessions at home.
  const home = homedir();
  if (config.cwd === undefined && existsSync(home)) config = { ...config, cwd: home };
  process.chdir('/');
  const logger: Logger = createLogger(config.logLevel);
  if (await socketAnswers(paths.socket)) {
    logger.info('a conch daemon already answers; not starting another', { socket: paths.socket });
    return 0;
  }
  const previous = previousDaemon(paths);
  if (existsSync(paths.socket)) {
    logger.info('removing a stale socket', { socket: paths.socket });
    unlinkSync(paths.socket);
  }
  if (existsSync(paths.stoppedFile)) unlinkSync(paths.stoppedFile);
  if (previous) logger.info('replacing an earlier daemon', { how: previous });
  // Reaps what a dead daemon (or any dead conch server) left running, then assembles the engine. The feed
  // keeps what the engine decides (as the audit log gets it) for the web page, from the start on.
  const feed = new SupervisionFeed();
  const guards = defaultGuards(config);
  const audit = feed.auditSink(guards.audit);
  const service = await createConchService(config, logger, {
    previousSessionsGone: previous !== undefined,
    guards: { ...guards, audit },
  });
  const tools: ToolRegistrar[] = [
    sshTools(),
    containerTools(),
    delegateTools(),
    ...(options.extraTools ?? []),
  ];
  const startedAt = new Date().toISOString();
  const identity = () => ({
    pid: process.pid,
    socket: paths.socket,
    started_at: startedAt,
    version: CLI_VERSION,
  });
  const web = new WebDoor({
    service,
    feed,
    audit,
    policy: webPolicy(config, guards.policy?.active === true),
    daemon: () => ({ pid: process.pid, version: CLI_VERSION, started_at: startedAt }),
    logger,
    ...(options.viewerBacklogBytes === undefined ? {} : { viewerBacklogBytes: options.viewerBacklogBytes }),
  });
  const connections = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    serveConnection(socket, {
      service,
      config,
      logger,
      tools,
      identity,
      viewerBacklogBytes: options.viewerBacklogBytes,
      feed,
      web,
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
  const inode = socketInode(paths.socket);
  writeFileSync(paths.pidFile, `${process.pid}\n`, { mode: 0o600 });
  logger.info('daemon ready', { pid: process.pid, socket: paths.socket });

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (why: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info('daemon stopping', { why });
      clearInterval(checker);
      watcher?.close();
      const force = setTimeout(() => resolveExit(0), SHUTDOWN_DEADLINE_MS);
      server.close();
      for (const socket of connections) socket.destroy();
      void web.close();
      // Every process killed (SIGKILL after the service's short shutdown grace), spill files removed;
      // OpenCode stops alongside.
      service.close().finally(() => {
        removeOwnFiles(paths, inode);
        try {
          writeFileSync(paths.stoppedFile, `${new Date().toISOString()} ${why}\n`, { mode: 0o600 });
        } catch {
          // the directory itself is gone
        }
        clearTimeout(force);
        logger.info('daemon stopped');
        resolveExit(0);
      });
    };
    // Without its socket nobody can reach the daemon (and the next command would start a second one).
    const checkSocket = () => {
      if (socketInode(paths.socket) !== inode) stop('its socket was removed or replaced');
    };
    const checker = setInterval(checkSocket, SOCKET_CHECK_MS);
    let watcher: ReturnType<typeof watch> | undefined;
    try {
      watcher = watch(paths.dir, checkSocket);
      watcher.on('error', checkSocket);
    } catch {
      // the interval alone checks then
    }
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
    process.on('unhandledRejection', (reason) =>
      logger.error('unhandled rejection', { error: String(reason) }),
    );
    process.on('uncaughtException', (error) => logger.error('uncaught exception', { error: error.stack }));
  });
}
