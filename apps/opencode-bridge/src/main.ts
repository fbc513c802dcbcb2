/**
 * `conch-opencode`: a standalone MCP server over stdio whose only tool is `delegate_task`.
 * It keeps one warm OpenCode server (spawned on 127.0.0.1, or the one at `--opencode-url`) and stops it
 * on stdin EOF, SIGINT, SIGTERM or SIGHUP.
 */

import { createRequire } from 'node:module';
import { Delegator, delegateTaskTool } from '@conch/delegate';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Command, CommanderError } from 'commander';
import { registerBridgeTool } from './tool-registration.js';

/** The package version. */
export const BRIDGE_VERSION: string = (() => {
  try {
    return (createRequire(import.meta.url)('../package.json') as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** The bridge's flags. */
export interface BridgeOptions {
  opencodeUrl?: string;
  opencodeBin?: string;
  model?: string;
}

/** Parses argv (without node and script); returns the options, or an exit code after help/version/errors. */
export function parseBridgeArgs(argv: readonly string[]): BridgeOptions | number {
  const program = new Command('conch-opencode')
    .description('An MCP server (stdio) with one tool, delegate_task, that hands coding tasks to OpenCode.')
    .version(BRIDGE_VERSION)
    .option(
      '--opencode-url <url>',
      'attach to this running OpenCode server (password from OPENCODE_SERVER_PASSWORD) instead of spawning one',
    )
    .option(
      '--opencode-bin <path>',
      'the opencode binary to spawn (default: opencode on PATH, then the installed opencode-ai)',
    )
    .option('--model <provider/model>', "the model for tasks that do not name one (default: OpenCode's own)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stderr.write(s), writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  const opts = program.opts<BridgeOptions>();
  if (opts.model !== undefined && !/^[^/]+\/.+$/.test(opts.model)) {
    process.stderr.write(
      `conch-opencode: --model ${JSON.stringify(opts.model)}: must be "provider/model".\n`,
    );
    return 2;
  }
  return opts;
}

/** Runs the bridge until shutdown; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const options = parseBridgeArgs(argv);
  if (typeof options === 'number') return options;
  const log = (message: string): void => {
    try {
      process.stderr.write(`conch-opencode: ${message}\n`);
    } catch {
      // stderr is gone; nothing to do.
    }
  };
  process.stderr.on('error', () => undefined);
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  const delegator = new Delegator({
    ...(options.opencodeUrl === undefined ? {} : { url: options.opencodeUrl }),
    ...(options.opencodeUrl !== undefined && password !== undefined ? { password } : {}),
    ...(options.opencodeBin === undefined ? {} : { bin: options.opencodeBin }),
    ...(options.model === undefined ? {} : { defaultModel: options.model }),
  });
  const server = new McpServer(
    { name: 'conch-opencode', title: 'conch: delegate coding tasks to OpenCode', version: BRIDGE_VERSION },
    { capabilities: { tools: {} } },
  );
  registerBridgeTool(server, {
    ...delegateTaskTool,
    run: (args, call) => delegator.delegate(args, call),
  });

  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    resolveExit = resolve;
  });
  let stopping = false;
  const shutdown = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log(`shutting down (${why})`);
    void Promise.allSettled([server.close(), delegator.close()]).then(() => resolveExit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  process.stdin.on('end', () => shutdown('stdin EOF'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  server.server.onclose = () => shutdown('transport closed');
  await server.connect(new StdioServerTransport());
  // Warm the OpenCode server now so that the first task does not wait for it; a failure is reported by
  // the first delegate_task call (DELEGATE_UNAVAILABLE) and retried then.
  delegator.ensureServer().then(
    (s) => log(`OpenCode ready at ${s.url}`),
    (error: unknown) =>
      log(`OpenCode is not available yet: ${error instanceof Error ? error.message : String(error)}`),
  );
  return exited;
}
