/**
 * `delegate_task` in the MCP face: the tool of `@conch/delegate` (name, description, parameters, result
 * shape, rendering), registered through the `ToolRegistrar` extension point when the service can delegate
 * (OpenCode found on PATH, the bundled `opencode-ai`, `--opencode-bin`, or `--opencode-url` given). Each
 * call is the service's `delegateTask`; the service owns the one warm OpenCode server and stops it.
 */

import { delegateTaskTool } from '@conch/delegate';
import { serviceCall } from './call-context.js';
import type { ToolRegistrar } from './server.js';

/** A registrar that adds `delegate_task` when the service can delegate (nothing otherwise). */
export function delegateTools(): ToolRegistrar {
  return (context) => {
    if (!context.service.canDelegate) return;
    context.registerTool({
      ...delegateTaskTool,
      run: (args, { call }) => context.service.delegateTask(args, serviceCall(call)),
      render: (result) => delegateTaskTool.render(result),
    });
  };
}
