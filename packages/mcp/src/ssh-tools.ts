/**
 * `connect_ssh` (docs/tools.md): opens an SSH session through `@conch/ssh` and hands its driver to the engine, so
 * that the session_id works with execute, read_output and every other tool exactly like a local one.
 *
 * - Host keys: the policy is checked against the operator's allowed list (`--ssh-host-key-policies`,
 *   config `ssh.allowed_host_key_policies`) before anything is sent. Under `ask` an unknown key is shown to
 *   the person through MCP elicitation when the client declared that capability (host, port, key type,
 *   SHA256 fingerprint; recorded in known_hosts when accepted); otherwise it is refused with the
 *   fingerprint and a hint. A changed key is refused under every policy.
 * - Secrets: the password and passphrase go to `connectSsh` only. They are never logged (the tool kit logs
 *   tool names and ids, never arguments), never echoed in errors (the parameters are `writeOnly`, which
 *   the tool kit redacts), never returned, and not kept after connecting.
 * - Failure: a driver whose session could not be opened is disposed; errors are docs/tools.md results
 *   (`SSH_UNREACHABLE`, `SSH_AUTH_FAILED`, `SSH_HOST_KEY_REJECTED`, `INVALID_ARGUMENT`, `LIMIT_REACHED`).
 */

import {
  type AbortSignalLike,
  ConchError,
  ErrorCode,
  hint,
  type SessionInfo,
  type SessionManager,
  verb,
} from '@conch/core';
import {
  type ConnectSshOptions,
  connectSsh,
  HOST_KEY_POLICIES,
  type HostKeyPolicy,
  type HostKeyQuestion,
  type SshConnection,
} from '@conch/ssh';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { renderConnectedSession } from './render.js';
import { ConnectSshShape } from './schemas.js';
import type { ToolRegistrar, ToolRegistrarContext } from './server.js';
import { sessionShapeParams } from './tools.js';

/** The names of the SSH tools. */
export const SSH_TOOL_NAMES = ['connect_ssh'] as const;

/** How long a person has to answer the host-key question (sshd's LoginGraceTime is 120 s by default). */
export const HOST_KEY_QUESTION_TIMEOUT_MS = 110_000;

/** What the operator allows (see `SshSettings` in config.ts). */
export interface SshToolsOptions {
  /** Host key policies an agent may choose (default: all four). */
  allowedPolicies?: readonly HostKeyPolicy[];
  /** Policy of calls that give none (default `ask`; must be allowed). */
  defaultPolicy?: HostKeyPolicy;
  /** Replaces `connectSsh` (embedding, tests). */
  connect?: (options: ConnectSshOptions) => Promise<SshConnection>;
}

/** The connect_ssh result. */
export type ConnectSshResult = SessionInfo & {
  banner: string;
  host_key_fingerprint: string;
  host_key_type: string;
  host_key_note?: string;
  via?: string[];
};

/** Returns a registrar for `createConchServer({ extraTools })` that adds `connect_ssh`. */
export function sshTools(options: SshToolsOptions = {}): ToolRegistrar {
  return (context) => registerSshTools(context, options);
}

/** True when the connected client can answer a form elicitation (an empty `elicitation: {}` means form). */
export function clientCanElicit(server: McpServer): boolean {
  const elicitation = server.server.getClientCapabilities()?.elicitation;
  return elicitation !== undefined && elicitation.form !== undefined;
}

/** The question shown to the person under `ask`. */
export function hostKeyQuestionText(question: HostKeyQuestion, knownHostsPath: string | undefined): string {
  const where = question.port === 22 ? question.host : `${question.host} port ${question.port}`;
  return [
    `conch: an SSH connection to ${where}${question.jumpHost ? ' (a ProxyJump host on the way to the target)' : ''} presents a host key that is not in known_hosts.`,
    '',
    `Host: ${question.host}`,
    `Port: ${question.port}`,
    `Key type: ${question.keyType}`,
    `Fingerprint: ${question.fingerprint}`,
    '',
    "Trust it only if this is the host's real key (ask its administrator, or run ssh-keygen -lf on the host's " +
      `/etc/ssh/ssh_host_*_key.pub). Accepting records it in ${knownHostsPath ?? 'known_hosts'}; declining refuses the connection. No credential has been sent yet.`,
  ].join('\n');
}

/** Asks the person through MCP elicitation; true only for an explicit accept. */
async function askPerson(
  server: McpServer,
  question: HostKeyQuestion,
  knownHostsPath: string | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const answer = await server.server.elicitInput(
    {
      mode: 'form',
      message: hostKeyQuestionText(question, knownHostsPath),
      requestedSchema: {
        type: 'object',
        properties: {
          accept: {
            type: 'boolean',
            title: `Trust ${question.keyType} key ${question.fingerprint} for ${question.host}:${question.port}`,
            description:
              'Yes: connect and record the key in known_hosts. No: refuse the connection (nothing is sent).',
            default: false,
          },
        },
        required: ['accept'],
      },
    },
    { timeout: HOST_KEY_QUESTION_TIMEOUT_MS, ...(signal ? { signal } : {}) },
  );
  return answer.action === 'accept' && answer.content?.accept === true;
}

/** The request's cancellation as a real AbortSignal (what ssh2 and the SDK take). */
function abortSignalOf(like: AbortSignalLike | undefined): AbortSignal | undefined {
  if (like === undefined || like instanceof AbortSignal) return like;
  const controller = new AbortController();
  if (like.aborted) controller.abort();
  else like.addEventListener('abort', () => controller.abort(), { once: true });
  return controller.signal;
}

/** Removes terminal escapes and control characters from the server's banner, and caps it. */
export function cleanBanner(banner: string): string {
  const text = banner
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return text.length > 4000 ? `${text.slice(0, 4000)}\n[banner cut at 4000 characters]` : text;
}

/** Adds to the hint of a host-key refusal what this server allows (and why nobody could be asked). */
function explainRefusal(
  error: unknown,
  policy: HostKeyPolicy,
  canAsk: boolean,
  allowed: readonly HostKeyPolicy[],
): unknown {
  if (!ConchError.is(error) || error.code !== ErrorCode.SSH_HOST_KEY_REJECTED) return error;
  const data = error.data ?? {};
  const unknownKey = data.key_type !== undefined && data.known_fingerprints === undefined;
  if (!unknownKey) return error;
  let message = error.message;
  if (policy === 'ask' && !canAsk) {
    message = message.replace(
      'conch could not ask a person to confirm it.',
      'conch could not ask a person to confirm it: this MCP client does not support elicitation.',
    );
  }
  const fingerprint = typeof data.fingerprint === 'string' ? data.fingerprint : 'the fingerprint';
  const hint = allowed.includes('accept-new')
    ? `Verify ${fingerprint} with the host's administrator, then connect again with host_key_policy "accept-new" (records the key), or add the key to known_hosts (ssh-keyscan).`
    : `Verify ${fingerprint} with the host's administrator, then add the key to known_hosts (e.g. ssh-keyscan -p PORT HOST >> ~/.ssh/known_hosts, or known_hosts_path). This server does not allow "accept-new" (allowed: ${allowed.join(', ')}).`;
  return new ConchError(error.code, message, { hint, data, cause: error });
}

/** Registers `connect_ssh` (see the module doc). */
export function registerSshTools(context: ToolRegistrarContext, options: SshToolsOptions = {}): void {
  const { server, manager, registerTool } = context;
  const allowed = HOST_KEY_POLICIES.filter((p) => (options.allowedPolicies ?? HOST_KEY_POLICIES).includes(p));
  if (allowed.length === 0) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      'connect_ssh needs at least one allowed host key policy.',
    );
  }
  const defaultPolicy = options.defaultPolicy ?? (allowed.includes('ask') ? 'ask' : allowed[0]!);
  if (!allowed.includes(defaultPolicy)) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `The default host key policy "${defaultPolicy}" is not allowed (allowed: ${allowed.join(', ')}).`,
    );
  }
  const connect = options.connect ?? connectSsh;
  registerConnectSsh(registerTool, server, manager, allowed, defaultPolicy, connect);
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
  manager: SessionManager,
  allowed: readonly HostKeyPolicy[],
  defaultPolicy: HostKeyPolicy,
  connect: (options: ConnectSshOptions) => Promise<SshConnection>,
) {
  const { limits } = manager;
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
      ...sessionShapeParams(manager),
    }),
    output: ConnectSshShape,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
    run: async (args, { call }): Promise<ConnectSshResult> => {
      // Checked again by openSession; checking first avoids connecting (and asking about a host key) in vain.
      const open = manager.listSessions().length;
      if (open >= limits.maxSessions) {
        throw new ConchError(
          ErrorCode.LIMIT_REACHED,
          `Session limit reached: ${open} of ${limits.maxSessions} sessions are open; nothing was connected.`,
          {
            hint: hint`Close a session with ${verb('closeSession')} (${verb('listSessions')} shows them), then connect again.`,
          },
        );
      }
      const policy = args.host_key_policy ?? defaultPolicy;
      const canAsk = policy === 'ask' && clientCanElicit(server);
      const knownHostsPath = args.known_hosts_path;
      const signal = abortSignalOf(call.signal);
      let conn: SshConnection;
      try {
        // The only place the secrets go; nothing here keeps a reference once connect returns.
        conn = await connect({
          host: args.host,
          ...(args.port === undefined ? {} : { port: args.port }),
          ...(args.username === undefined ? {} : { username: args.username }),
          ...(args.password === undefined ? {} : { password: args.password }),
          ...(args.private_key_path === undefined ? {} : { privateKeyPath: args.private_key_path }),
          ...(args.passphrase === undefined ? {} : { passphrase: args.passphrase }),
          useAgent: args.use_agent ?? true,
          hostKeyPolicy: policy,
          ...(knownHostsPath === undefined ? {} : { knownHostsPath }),
          connectTimeoutS: args.connect_timeout ?? 20,
          keepaliveIntervalS: args.keepalive_interval ?? 15,
          allowedPolicies: allowed,
          ...(canAsk
            ? { confirmHostKey: (q: HostKeyQuestion) => askPerson(server, q, knownHostsPath, signal) }
            : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        throw explainRefusal(error, policy, canAsk, allowed);
      }
      try {
        // The remote login shell, not the local --shell setting.
        const shell = await conn.driver.defaultShell();
        const session = await manager.openSession(conn.driver, {
          kind: 'ssh',
          host: conn.host,
          port: conn.port,
          username: conn.username,
          shell,
          ...(args.cols === undefined ? {} : { cols: args.cols }),
          ...(args.rows === undefined ? {} : { rows: args.rows }),
          ...(args.name === undefined ? {} : { name: args.name }),
        });
        return {
          ...session.toInfo(),
          banner: cleanBanner(conn.banner),
          host_key_fingerprint: conn.hostKeyFingerprint,
          host_key_type: conn.hostKeyType,
          ...(conn.policyNote ? { host_key_note: conn.policyNote } : {}),
          ...(conn.via.length > 0 ? { via: conn.via } : {}),
        };
      } catch (error) {
        await conn.driver.dispose().catch(() => {});
        throw error;
      }
    },
    render: (result: ConnectSshResult) => renderConnectedSession(result),
  });
}
