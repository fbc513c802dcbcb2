/**
 * `createConchServer`: an McpServer exposing one ConchService through the tools of a profile.
 * Transport-agnostic: `bin.ts` connects it to stdio; tests and other faces may connect it elsewhere.
 * The server gets the service, never the engine: each tool translates its arguments into a verb of the
 * service and renders the result.
 */

import { createRequire } from 'node:module';
import { ConchError, ErrorCode } from '@conch/core';
import {
  type ConchService,
  isProfile,
  type Logger,
  type Profile,
  silentLogger,
  unknownProfileMessage,
} from '@conch/service';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type * as z from 'zod';
import { serverInstructions } from './instructions.js';
import { COMPAT_PROFILES } from './profiles.js';
import { type ConchToolDefinition, registerConchTool } from './tool-kit.js';
import { registerDefaultTools } from './tools.js';

/** Throws `INVALID_ARGUMENT` naming the valid profiles unless `name` is one. */
export function assertProfile(name: string): Profile {
  if (isProfile(name)) return name;
  throw new ConchError(ErrorCode.INVALID_ARGUMENT, unknownProfileMessage(name));
}

/** What an extra-tool registrar gets: the server, the service, and conch's tool registration. */
export interface ToolRegistrarContext {
  server: McpServer;
  service: ConchService;
  logger: Logger;
  /**
   * Registers a tool with conch's guarantees (strict validation as INVALID_ARGUMENT results, structured
   * results with an output schema that also accepts the error shape, one text block, progress,
   * cancellation, no crash on errors, no argument logging).
   */
  registerTool<I extends z.ZodObject, R>(definition: ConchToolDefinition<I, R>): void;
}

/**
 * The extension point for tools beyond the default profile (e.g. `connect_ssh`, `delegate_task`):
 * a function that registers more tools given the service.
 */
export type ToolRegistrar = (context: ToolRegistrarContext) => void;

/** Options of {@link createConchServer}. */
export interface ConchServerOptions {
  /** The service to expose. */
  service: ConchService;
  /** Tool surface (default `default`). */
  profile?: string;
  /** Where logs go (default: none). */
  logger?: Logger;
  /** Extra tools to register after the profile's own. */
  extraTools?: readonly ToolRegistrar[];
  /** Runs at the end of `close()`, after the service has closed. */
  onClose?: () => Promise<void> | void;
}

/** A server, its service, and a close that stops both. */
export interface ConchServer {
  server: McpServer;
  service: ConchService;
  /**
   * Closes the MCP connection, closes the service (kills every process it started), then runs `onClose`.
   * Idempotent: later calls return the same promise.
   */
  close(): Promise<void>;
}

/** The package version (from package.json, which sits one level above both src/ and dist/). */
export const SERVER_VERSION: string = (() => {
  try {
    const require = createRequire(import.meta.url);
    return (require('../package.json') as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** Creates the conch MCP server over a ConchService (see the module doc). */
export function createConchServer(options: ConchServerOptions): ConchServer {
  const logger = options.logger ?? silentLogger;
  const profileName = assertProfile(options.profile ?? 'default');
  const compat = profileName === 'default' ? undefined : COMPAT_PROFILES[profileName];
  const { service } = options;
  const server = new McpServer(
    { name: 'conch', title: 'conch: real terminals for AI agents', version: SERVER_VERSION },
    {
      capabilities: { tools: {} },
      instructions: compat ? compat.instructions : serverInstructions(service),
    },
  );
  if (compat) {
    for (const definition of compat.tools(service)) registerConchTool(server, definition, logger);
  } else {
    registerDefaultTools({ server, service, logger });
  }
  // Under a compatibility profile, extra registrars add only the tools the profile lists (e.g. interminal
  // keeps connect_ssh); under `default`, all of them.
  const keep = compat ? new Set(compat.extraToolNames) : undefined;
  const context: ToolRegistrarContext = {
    server,
    service,
    logger,
    registerTool: (definition) => {
      if (keep && !keep.has(definition.name)) return;
      registerConchTool(server, definition, logger);
    },
  };
  for (const register of options.extraTools ?? []) register(context);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await server
        .close()
        .catch((error: unknown) =>
          logger.debug('closing the MCP connection failed', { error: String(error) }),
        );
      await service.close();
      if (options.onClose) {
        await Promise.resolve()
          .then(options.onClose)
          .catch((error: unknown) => logger.error('cleanup failed', { error: String(error) }));
      }
    })();
    return closing;
  };
  return { server, service, close };
}
