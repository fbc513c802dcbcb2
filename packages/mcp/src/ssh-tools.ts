/**
 * `connect_ssh` (docs/tools.md): the MCP face of the service's `connectSsh` (the whole sequence, from the
 * ssh config lookup to the host-key question, lives in `@conch/service`). The session_id it returns works
 * with execute, read_output and every other tool exactly like a local one. Under `ask`, an unknown host
 * key is shown to the person through MCP elicitation when the client declared that capability. The
 * password and passphrase are `writeOnly` parameters, which the tool kit never echoes or logs.
 */

import {
  type ConchService,
  type ConnectSshResult,
  parameterDescription,
  VERB_PARAMETERS,
} from '@conch/service';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from '@conch/ssh/host-key-policies';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { serviceCall } from './call-context.js';
import { zodParameter, zodShapeFor } from './parameter-schemas.js';
import { renderConnectedSession } from './render.js';
import { ConnectSshShape } from './schemas.js';
import type { ToolRegistrar, ToolRegistrarContext } from './server.js';

/** Whether a client can answer elicitation (the face's side of asking the person). */
export { clientCanElicit } from './call-context.js';

/** The names of the SSH tools. */
export const SSH_TOOL_NAMES = ['connect_ssh'] as const;

/**
 * Returns a registrar for `createConchServer({ extraTools })` that adds `connect_ssh`. What the operator
 * allows (host key policies, the default) is the service's (`ConchServiceOptions.ssh`).
 */
export function sshTools(): ToolRegistrar {
  return (context) => registerSshTools(context);
}

/** Registers `connect_ssh` (see the module doc). */
export function registerSshTools(context: ToolRegistrarContext): void {
  const { server, service, registerTool } = context;
  const { allowed, defaultPolicy } = service.sshPolicies;
  registerConnectSsh(registerTool, server, service, allowed, defaultPolicy);
}

function registerConnectSsh(
  registerTool: ToolRegistrarContext['registerTool'],
  server: McpServer,
  service: ConchService,
  allowed: readonly HostKeyPolicy[],
  defaultPolicy: HostKeyPolicy,
) {
  const forbidden = HOST_KEY_POLICIES.filter((p) => !allowed.includes(p));
  registerTool({
    name: 'connect_ssh',
    title: 'Open an SSH shell session on another machine',
    description:
      'Open a persistent shell session on a remote host over SSH: its session_id works with every command tool ' +
      'exactly like a local one. Use it instead of "ssh" inside execute (which hangs on prompts). The host key ' +
      'is checked against known_hosts BEFORE any credential is sent; a changed key is always ' +
      `refused. Host key policies: this server allows ${allowed.join(', ')}` +
      `${forbidden.length > 0 ? ` (forbidden: ${forbidden.join(', ')})` : ''}. ` +
      'A dead connection shows state "lost" (its commands fail with SESSION_LOST): connect again.',
    input: z.strictObject({
      ...zodShapeFor('connect_ssh', service),
      host_key_policy: zodParameter('connect_ssh', 'host_key_policy', service, {
        default: defaultPolicy,
        description: `${parameterDescription(VERB_PARAMETERS.connect_ssh.host_key_policy, service)}${forbidden.length > 0 ? ` Forbidden here: ${forbidden.join(', ')}.` : ''}`,
      }),
    }),
    output: ConnectSshShape,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
    run: (args, { call }): Promise<ConnectSshResult> => service.connectSsh(args, serviceCall(call, server)),
    render: (result: ConnectSshResult) => renderConnectedSession(result),
  });
}
