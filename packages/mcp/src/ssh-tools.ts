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
import { parameterDescription, VERB_PARAMETERS } from '@conch/service';
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
import { zodParameter, zodShapeFor } from './parameter-schemas.js';
import { renderConnectedSession } from './render.js';
import { ConnectSshShape } from './schemas.js';
import type { ToolRegistrar, ToolRegistrarContext } from './server.js';

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
      'Connect to a remote host over SSH and open a persistent shell session there; returns its session_id. ' +
      'That session_id works with execute, read_output, respond, send_control, list_processes, kill_process and ' +
      'close_session exactly like a local one (cd/export persist, exit codes, prompts, keys, background ' +
      'commands, tree kills). Use it instead of running "ssh" inside execute, which would hang on prompts. ' +
      'host may be an alias from ~/.ssh/config. Authentication tries private_key_path, the ssh-agent, the ' +
      'configured/default identity files, then password. The host key is verified against known_hosts BEFORE ' +
      `any credential is sent: a changed key is always refused. host_key_policy default "${defaultPolicy}"; ` +
      `this server allows ${allowed.join(', ')}${forbidden.length > 0 ? ` (forbidden: ${forbidden.join(', ')})` : ''}. ` +
      'Side effects: opens a network connection and a remote login shell; may add a host key to known_hosts. ' +
      `Limit: ${limits.maxSessions} sessions. Result: Session { session_id, kind "ssh", host, port, username, ` +
      'state, cwd, shell, … } plus banner, host_key_fingerprint, host_key_type and host_key_note (a key was ' +
      'recorded, or accepted unverified). If the connection dies, list_sessions shows state "lost" and its ' +
      'commands fail with SESSION_LOST: connect_ssh again (close_session removes the lost one). Errors: ' +
      'SSH_UNREACHABLE (host/port/network, or connect_timeout passed), SSH_AUTH_FAILED (names the methods ' +
      'tried), SSH_HOST_KEY_REJECTED (unknown, declined or changed key, with the fingerprints), ' +
      'INVALID_ARGUMENT (bad value, forbidden policy, unreadable key file).',
    input: z.strictObject({
      ...zodShapeFor('connect_ssh', manager),
      host_key_policy: zodParameter('connect_ssh', 'host_key_policy', manager, {
        default: defaultPolicy,
        description: `${parameterDescription(VERB_PARAMETERS.connect_ssh.host_key_policy, manager)}${forbidden.length > 0 ? ` Forbidden here: ${forbidden.join(', ')}.` : ''}`,
      }),
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
          ...(args.use_agent === undefined ? {} : { useAgent: args.use_agent }),
          hostKeyPolicy: policy,
          ...(knownHostsPath === undefined ? {} : { knownHostsPath }),
          ...(args.connect_timeout === undefined ? {} : { connectTimeoutS: args.connect_timeout }),
          ...(args.keepalive_interval === undefined ? {} : { keepaliveIntervalS: args.keepalive_interval }),
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
