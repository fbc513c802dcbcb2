/**
 * `connect_ssh` (docs/tools.md): the MCP face of the service's `connectSsh` (the whole sequence, from the
 * ssh config lookup to the host-key question, lives in `@conch/service`). The session_id it returns works
 * with execute, read_output and every other tool exactly like a local one. Under `ask`, an unknown host
 * key is shown to the person through MCP elicitation when the client declared that capability. The
 * password and passphrase are `writeOnly` parameters, which the tool kit never echoes or logs.
 */

import type { ConchService, ConnectSshResult } from '@conch/service';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from '@conch/ssh';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { serviceCall } from './call-context.js';
import { renderConnectedSession } from './render.js';
import { ConnectSshShape } from './schemas.js';
import type { ToolRegistrar, ToolRegistrarContext } from './server.js';
import { sessionShapeParams } from './tools.js';

/** The connect_ssh result, the host-key question and the banner cleaning (defined in `@conch/service`). */
export {
  type ConnectSshResult,
  cleanBanner,
  HOST_KEY_QUESTION_TIMEOUT_MS,
  hostKeyQuestionText,
} from '@conch/service';
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

const POLICY_DOC: Record<HostKeyPolicy, string> = {
  ask: '"ask": an unknown key is shown to the person (MCP elicitation) and recorded if accepted; refused with its fingerprint when the client cannot ask',
  'accept-new': '"accept-new": an unknown key is recorded in known_hosts and accepted',
  strict: '"strict": only keys already in known_hosts are accepted',
  insecure:
    '"insecure": an unknown key is accepted WITHOUT verification and not recorded (the result says so)',
};

function registerConnectSsh(
  registerTool: ToolRegistrarContext['registerTool'],
  server: McpServer,
  service: ConchService,
  allowed: readonly HostKeyPolicy[],
  defaultPolicy: HostKeyPolicy,
) {
  const { limits } = service;
  const forbidden = HOST_KEY_POLICIES.filter((p) => !allowed.includes(p));
  registerTool({
    name: 'connect_ssh',
    title: 'Open an SSH shell session on another machine',
    description:
      'Open a persistent shell session on a remote host over SSH: its session_id works with every command tool ' +
      'exactly like a local one. Use it instead of "ssh" inside execute (which hangs on prompts). Auth tries ' +
      'private_key_path, the ssh-agent, default identity files, then password. The host key is checked against ' +
      'known_hosts BEFORE any credential is sent; a changed key is always ' +
      `refused. host_key_policy default "${defaultPolicy}"; this server allows ${allowed.join(', ')}` +
      `${forbidden.length > 0 ? ` (forbidden: ${forbidden.join(', ')})` : ''}. ` +
      'A dead connection shows state "lost" in list_sessions (its commands fail with SESSION_LOST): connect again. ' +
      'Errors: SSH_UNREACHABLE, SSH_AUTH_FAILED, SSH_HOST_KEY_REJECTED.',
    input: z.strictObject({
      host: z
        .string()
        .min(1)
        .max(1000)
        .describe(
          'Host to connect to: a name, an IP address, an alias from ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyJump are honoured), or user@host:port.',
        ),
      port: z
        .number()
        .int()
        .min(1)
        .max(65535)
        .optional()
        .meta({ default: 22 })
        .describe("sshd's TCP port. 1-65535, default 22 (or the ssh config's Port for an alias)."),
      username: z
        .string()
        .min(1)
        .max(256)
        .optional()
        .describe(
          "Remote user to log in as. Default: the ssh config's User for this host, else the local user running this server.",
        ),
      password: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .meta({ writeOnly: true })
        .describe(
          'Password for password authentication (tried after keys and the agent). Sent only after the host key is verified; never logged, echoed, returned or kept after connecting. Default: none.',
        ),
      private_key_path: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe(
          "Path of a private key file on THIS machine (OpenSSH, PEM or PuTTY format; ~ is expanded); tried first. Default: none (the agent and the ssh config's IdentityFile, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa, are still tried).",
        ),
      passphrase: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .meta({ writeOnly: true })
        .describe(
          'Passphrase that decrypts private_key_path (or the default identity files). Never logged, echoed, returned or kept. Default: none.',
        ),
      use_agent: z
        .boolean()
        .optional()
        .meta({ default: true })
        .describe("Also try the keys of the ssh-agent at this server's $SSH_AUTH_SOCK. Default true."),
      host_key_policy: z
        .enum(HOST_KEY_POLICIES as unknown as [HostKeyPolicy, ...HostKeyPolicy[]])
        .optional()
        .meta({ default: defaultPolicy })
        .describe(
          `How an UNKNOWN host key is handled (a known key must match; a changed key is refused under every policy): ${HOST_KEY_POLICIES.map((p) => POLICY_DOC[p]).join('; ')}. Default "${defaultPolicy}". Allowed on this server: ${allowed.join(', ')}${forbidden.length > 0 ? `; forbidden by the operator (INVALID_ARGUMENT): ${forbidden.join(', ')}` : ''}.`,
        ),
      known_hosts_path: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe(
          "known_hosts file (on this machine; ~ expanded) the host key is checked against and new keys are recorded in. Default: the ssh config's UserKnownHostsFile, else ~/.ssh/known_hosts (/etc/ssh/ssh_known_hosts is also read).",
        ),
      connect_timeout: z
        .number()
        .min(0.1)
        .max(3600)
        .optional()
        .meta({ default: 20 })
        .describe(
          'Seconds to reach the host, verify its key and log in, else SSH_UNREACHABLE. Time the person spends confirming a host key does not count. Float, 0.1-3600, default 20.',
        ),
      keepalive_interval: z
        .number()
        .min(0)
        .max(3600)
        .optional()
        .meta({ default: 15 })
        .describe(
          'Seconds between SSH keepalive probes; after 3 unanswered ones (about 4 × this) the connection counts as dead and the session becomes "lost". A silent remote command is not a dead link. 0 turns keepalive off. Float, 0-3600, default 15.',
        ),
      ...sessionShapeParams(service),
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
