/**
 * `delegate_task` in conch-mcp: the tool of `@conch/delegate`, registered through the `ToolRegistrar`
 * extension point when OpenCode can be found (PATH, the bundled `opencode-ai`, `--opencode-bin`) or
 * `--opencode-url` is given. One Delegator (one warm OpenCode server) per server, stopped with it.
 */

import { Delegator, delegateTaskTool, findOpencode } from '@conch/delegate';
import type { Logger } from '@conch/service';
import type { ToolRegistrar } from './server.js';

/** The registrar and the cleanup of `delegate_task`. */
export interface DelegateTool {
  register: ToolRegistrar;
  /** Stops the OpenCode server this conch-mcp started (if any). */
  close(): Promise<void>;
}

/** `delegate_task` for these settings, or undefined when there is no OpenCode to delegate to. */
export function delegateTool(
  opencode: { url?: string; bin?: string },
  logger: Logger,
): DelegateTool | undefined {
  if (opencode.url === undefined && findOpencode(opencode.bin) === undefined) {
    logger.info('delegate_task not offered: no opencode binary found (see --opencode-bin, --opencode-url)');
    return undefined;
  }
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  const delegator = new Delegator({
    ...(opencode.url === undefined ? {} : { url: opencode.url }),
    ...(opencode.url !== undefined && password !== undefined ? { password } : {}),
    ...(opencode.bin === undefined ? {} : { bin: opencode.bin }),
    onLog: (line) => logger.debug('opencode', { line }),
  });
  return {
    register: (context) =>
      context.registerTool({
        ...delegateTaskTool,
        run: (args, { call }) => delegator.delegate(args, call),
        render: (result) => delegateTaskTool.render(result),
      }),
    close: () => delegator.close(),
  };
}
