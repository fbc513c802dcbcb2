/**
 * The `conch-mcp` program: parse flags, reap what a dead instance left, build the engine and the server,
 * serve MCP over stdio, and shut down cleanly.
 *
 * Shutdown happens on SIGINT, SIGTERM, SIGHUP, on **stdin EOF** (after the calls already received have
 * answered, up to 2.5 s; the SDK's stdio transport does not
 * notice it) and when the transport closes: every process the server started is killed and spill files
 * are removed (unless `--keep-spill`), within 5 s; after 5 s the process exits regardless (the local
 * driver gives every process a parent-death signal, so nothing outlives a forced exit). Unhandled
 * rejections and exceptions are logged to stderr and do not stop the server.
 */

import {
  type CliSettings,
  ConfigError,
  createConchService,
  createLogger,
  defaultGuards,
  type EngineGuards,
  type Logger,
  parseCliArgs,
  type ResolvedConfig,
  resolveConfig,
} from '@conch/service';
import { containerTools } from './container-tool.js';
import { delegateTools } from './delegate-tool.js';
import { withDirectToolCalls } from './direct-tool-calls.js';
import { ConchLineTransport } from './line-transport.js';
import { tracePhasesToFile } from './phase-trace-file.js';
import { createConchServer, SERVER_VERSION, type ToolRegistrar } from './server.js';
import { sshTools } from './ssh-tools.js';

/** Hard limit for a clean shutdown before the process exits anyway. */
export const SHUTDOWN_DEADLINE_MS = 5000;
/** On stdin EOF, how long calls already received may run on to send their answers before shutdown. */
export const SHUTDOWN_ANSWER_GRACE_MS = 2500;

/** Hooks for embedding: a policy from the resolved config, and extra tools. */
export interface MainHooks {
  /** Builds the command policy and audit sink from the resolved configuration (`--allow`, `--deny`, `--audit-log`). */
  guards?(config: ResolvedConfig, logger: Logger): EngineGuards | Promise<EngineGuards>;
  /** Extra tools (e.g. delegate_task), registered after `connect_ssh`. */
  extraTools?: readonly ToolRegistrar[];
  /** Register `connect_ssh` (default true), restricted by the configuration's `ssh` settings. */
  ssh?: boolean;
  /** Register `delegate_task` when OpenCode can be found or `--opencode-url` is given (default true). */
  delegate?: boolean;
}

/** Runs the stdio server until shutdown. Resolves with the exit code once shutdown has completed. */
export async function main(argv: readonly string[], hooks: MainHooks = {}): Promise<number> {
  const parsed = parseCliArgs(argv, SERVER_VERSION);
  if (parsed.kind === 'exit') return parsed.code;
  return serveStdio(parsed.settings, hooks);
}

/**
 * Runs the stdio server with settings already parsed from flags (`conch mcp` parses the same flags with
 * its own commander command). A bad setting is reported on stderr, naming the flag and the value, and
 * resolves with exit code 2.
 */
export async function serveStdio(settings: CliSettings, hooks: MainHooks = {}): Promise<number> {
  let config: ResolvedConfig;
  try {
    config = resolveConfig(settings);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`conch-mcp: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  // A client that dies closes our stderr too: an unhandled EPIPE there would re-enter the
  // uncaughtException handler (which logs to stderr) forever. Stop logging instead; stdin EOF shuts down.
  let stderrOpen = true;
  process.stderr.on('error', () => {
    stderrOpen = false;
  });
  const logger = createLogger(config.logLevel, {
    write: (line: string) => (stderrOpen ? process.stderr.write(line) : false),
  });
  process.on('unhandledRejection', (reason) =>
    logger.error('unhandled rejection', { error: reason instanceof Error ? reason.stack : String(reason) }),
  );
  process.on('uncaughtException', (error) =>
    logger.error('uncaught exception', { error: error.stack ?? String(error) }),
  );

  let guards: EngineGuards;
  try {
    guards = hooks.guards ? await hooks.guards(config, logger) : defaultGuards(config);
  } catch (error) {
    // A malformed rule or a failing match/not_match example is a start-up error.
    process.stderr.write(`conch-mcp: ${(error as Error).message}\n`);
    return 2;
  }
  // The service reaps what a dead instance left, assembles the engine (and OpenCode delegation), and at
  // close kills everything it started (within the shutdown grace) and releases the engine.
  const service = await createConchService(config, logger, { guards, delegate: hooks.delegate !== false });
  const extraTools: ToolRegistrar[] = [
    ...(hooks.ssh === false ? [] : [sshTools()]),
    containerTools(),
    delegateTools(),
    ...(hooks.extraTools ?? []),
  ];
  const conch = createConchServer({ service, profile: config.profile, logger, extraTools });

  const phaseTraceFile = process.env.CONCH_PHASE_TRACE;
  if (phaseTraceFile) tracePhasesToFile(phaseTraceFile);
  const transport = new ConchLineTransport(process.stdin, process.stdout, {
    log: (message, fields) => logger.warn(message, fields),
  });
  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    resolveExit = resolve;
  });
  let shuttingDown = false;
  const shutdown = (why: string): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info('shutting down', { why });
    const force = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting anyway', { ms: SHUTDOWN_DEADLINE_MS });
      resolveExit(0);
    }, SHUTDOWN_DEADLINE_MS);
    // After stdin EOF the client can still read: let calls it already sent answer first (`printf … | conch-mcp`).
    const answered = why.startsWith('stdin')
      ? transport.whenAnswered(SHUTDOWN_ANSWER_GRACE_MS)
      : Promise.resolve(true);
    answered
      // Closes the connection, then the service: its final kills fit in the deadline (a short grace).
      .then(() => conch.close())
      .catch((error: unknown) => logger.error('shutdown failed', { error: String(error) }))
      .finally(() => {
        clearTimeout(force);
        logger.info('stopped');
        resolveExit(0);
      });
  };

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  process.stdin.on('end', () => shutdown('stdin EOF'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdout.on('error', (error) => {
    logger.warn('stdout failed', { error: String(error) });
    shutdown('stdout closed');
  });

  conch.server.server.onclose = () => shutdown('transport closed');
  conch.server.server.onerror = (error) => logger.warn('protocol error', { error: String(error) });
  await conch.server.connect(withDirectToolCalls(conch.server, transport));
  logger.info('ready', {
    version: SERVER_VERSION,
    pid: process.pid,
    profile: config.profile,
    ...(config.configPath ? { config: config.configPath } : {}),
    ...(hooks.ssh === false
      ? {}
      : {
          ssh_host_key_policies: config.ssh.allowedHostKeyPolicies.join(','),
          ssh_default_policy: config.ssh.defaultHostKeyPolicy,
        }),
  });
  return exited;
}
