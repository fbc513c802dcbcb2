/**
 * The `connect_ssh` sequence of the service, whatever face calls it: the session limit, the host key
 * policy the operator allows, asking the person about an unknown key (through the call context's `ask`),
 * `@conch/ssh`'s `connectSsh` (ssh config lookup, agent and keys, ProxyJump), and handing the driver to
 * the engine.
 *
 * - Host keys: the policy is checked against the operator's allowed list (`--ssh-host-key-policies`,
 *   config `ssh.allowed_host_key_policies`) before anything is sent. Under `ask` an unknown key is shown to
 *   the person when the face can ask (host, port, key type, SHA256 fingerprint; recorded in known_hosts
 *   when accepted); otherwise it is refused with the fingerprint and a hint. A changed key is refused
 *   under every policy.
 * - Secrets: the password and passphrase go to `connectSsh` only. They are never logged, never echoed in
 *   errors, never returned, and not kept after connecting.
 * - Failure: a driver whose session could not be opened is disposed; errors are `SSH_UNREACHABLE`,
 *   `SSH_AUTH_FAILED`, `SSH_HOST_KEY_REJECTED`, `INVALID_ARGUMENT` or `LIMIT_REACHED`.
 */

import {
  type AbortSignalLike,
  ConchError,
  ErrorCode,
  type SessionInfo,
  type SessionManager,
} from '@conch/core';
import type { ConnectSshOptions, HostKeyQuestion, SshConnection } from '@conch/ssh';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from '@conch/ssh/host-key-policies';
import type { ServiceCallContext } from './call-context.js';
import type { Logger } from './logger.js';
import { loadFailure, onDemand } from './on-demand.js';
import { assertRoomForSession } from './session-limit.js';

/** How long a person has to answer the host-key question (sshd's LoginGraceTime is 120 s by default). */
export const HOST_KEY_QUESTION_TIMEOUT_MS = 110_000;

/** What the operator allows for SSH (see `SshSettings` in config.ts). */
export interface SshServiceOptions {
  /** Host key policies a caller may choose (default: all four). */
  allowedPolicies?: readonly HostKeyPolicy[];
  /** Policy of calls that give none (default `ask`; must be allowed). */
  defaultPolicy?: HostKeyPolicy;
  /** Replaces `connectSsh` (embedding, tests). */
  connect?: (options: ConnectSshOptions) => Promise<SshConnection>;
}

/** The host key policies in effect: the allowed ones (in {@link HOST_KEY_POLICIES} order) and the default. */
export interface SshPolicies {
  allowed: readonly HostKeyPolicy[];
  defaultPolicy: HostKeyPolicy;
}

/** `connect_ssh` parameters (plain JSON, the names of docs/tools.md). */
export interface ConnectSshParams {
  host: string;
  port?: number | undefined;
  username?: string | undefined;
  password?: string | undefined;
  private_key_path?: string | undefined;
  passphrase?: string | undefined;
  use_agent?: boolean | undefined;
  host_key_policy?: HostKeyPolicy | undefined;
  known_hosts_path?: string | undefined;
  connect_timeout?: number | undefined;
  keepalive_interval?: number | undefined;
  cols?: number | undefined;
  rows?: number | undefined;
  name?: string | undefined;
}

/** The connect_ssh result. */
export type ConnectSshResult = SessionInfo & {
  banner: string;
  host_key_fingerprint: string;
  host_key_type: string;
  host_key_note?: string;
  via?: string[];
};

/** Checks the operator's SSH settings: at least one allowed policy, and a default among them. */
export function sshPolicies(options: SshServiceOptions = {}): SshPolicies {
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
  return { allowed, defaultPolicy };
}

/** The SSH driver module, loaded by the first connection (see {@link loadSshDriver}). */
export type SshDriverModule = typeof import('@conch/ssh');

/**
 * `@conch/ssh` (and ssh2 under it), loaded on the first `connect_ssh` rather than at start-up: a server
 * that never connects anywhere does not hold it. A failed load is not cached (the next call tries again)
 * and is reported as what it is.
 */
export const loadSshDriver: () => Promise<SshDriverModule> = onDemand(
  () => import('@conch/ssh'),
  (error) =>
    new ConchError(
      ErrorCode.INTERNAL,
      `The SSH driver could not be loaded (@conch/ssh, ssh2): ${loadFailure(error)}`,
      {
        hint: 'Reinstall conch (its dependency ssh2 is missing or broken); local sessions are unaffected.',
        cause: error,
      },
    ),
);

/** Whether {@link connectSshOnDemand} has said that it loaded the driver. */
let loadSaid = false;

/**
 * `@conch/ssh`'s `connectSsh`, loading the driver first ({@link loadSshDriver}); the service's default. The
 * first load is logged at debug level (`loaded the SSH driver`), the one outside sign that it happened.
 */
export async function connectSshOnDemand(
  options: ConnectSshOptions,
  logger?: Logger,
): Promise<SshConnection> {
  const { connectSsh } = await loadSshDriver();
  if (!loadSaid) {
    loadSaid = true;
    logger?.debug('loaded the SSH driver (@conch/ssh, ssh2)');
  }
  return connectSsh(options);
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

/** Removes terminal escapes and control characters from the server's banner, and caps it. */
export function cleanBanner(banner: string): string {
  const text = banner
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  return text.length > 4000 ? `${text.slice(0, 4000)}\n[banner cut at 4000 characters]` : text;
}

/** The call's cancellation as a real AbortSignal (what ssh2 takes). */
export function abortSignalOf(like: AbortSignalLike | undefined): AbortSignal | undefined {
  if (like === undefined || like instanceof AbortSignal) return like;
  const controller = new AbortController();
  if (like.aborted) controller.abort();
  else like.addEventListener('abort', () => controller.abort(), { once: true });
  return controller.signal;
}

/** Adds to the hint of a host-key refusal what the operator allows (and why nobody could be asked). */
function explainRefusal(
  error: unknown,
  policy: HostKeyPolicy,
  cannotAsk: string | undefined,
  allowed: readonly HostKeyPolicy[],
): unknown {
  if (!ConchError.is(error) || error.code !== ErrorCode.SSH_HOST_KEY_REJECTED) return error;
  const data = error.data ?? {};
  const unknownKey = data.key_type !== undefined && data.known_fingerprints === undefined;
  if (!unknownKey) return error;
  let message = error.message;
  if (policy === 'ask' && cannotAsk !== undefined) {
    message = message.replace(
      'conch could not ask a person to confirm it.',
      `conch could not ask a person to confirm it: ${cannotAsk}.`,
    );
  }
  const fingerprint = typeof data.fingerprint === 'string' ? data.fingerprint : 'the fingerprint';
  const advice = allowed.includes('accept-new')
    ? `Verify ${fingerprint} with the host's administrator, then connect again with host_key_policy "accept-new" (records the key), or add the key to known_hosts (ssh-keyscan).`
    : `Verify ${fingerprint} with the host's administrator, then add the key to known_hosts (e.g. ssh-keyscan -p PORT HOST >> ~/.ssh/known_hosts, or known_hosts_path). This server does not allow "accept-new" (allowed: ${allowed.join(', ')}).`;
  return new ConchError(error.code, message, { hint: advice, data, cause: error });
}

/** The whole `connect_ssh` sequence (see the module doc). */
export async function connectSshSession(
  manager: SessionManager,
  policies: SshPolicies,
  connect: (options: ConnectSshOptions) => Promise<SshConnection>,
  params: ConnectSshParams,
  context: ServiceCallContext,
): Promise<ConnectSshResult> {
  // Checked again by openSession; checking first avoids connecting (and asking about a host key) in vain.
  assertRoomForSession(manager, 'nothing was connected', 'connect again');
  const { allowed } = policies;
  const policy = params.host_key_policy ?? policies.defaultPolicy;
  const ask = policy === 'ask' ? context.ask : undefined;
  const cannotAsk = ask ? undefined : (context.cannotAsk ?? 'nobody can be asked on this connection');
  const knownHostsPath = params.known_hosts_path;
  const signal = abortSignalOf(context.signal);
  let conn: SshConnection;
  try {
    // The only place the secrets go; nothing here keeps a reference once connect returns.
    conn = await connect({
      host: params.host,
      ...(params.port === undefined ? {} : { port: params.port }),
      ...(params.username === undefined ? {} : { username: params.username }),
      ...(params.password === undefined ? {} : { password: params.password }),
      ...(params.private_key_path === undefined ? {} : { privateKeyPath: params.private_key_path }),
      ...(params.passphrase === undefined ? {} : { passphrase: params.passphrase }),
      ...(params.use_agent === undefined ? {} : { useAgent: params.use_agent }),
      hostKeyPolicy: policy,
      ...(knownHostsPath === undefined ? {} : { knownHostsPath }),
      ...(params.connect_timeout === undefined ? {} : { connectTimeoutS: params.connect_timeout }),
      ...(params.keepalive_interval === undefined ? {} : { keepaliveIntervalS: params.keepalive_interval }),
      allowedPolicies: allowed,
      ...(ask
        ? {
            confirmHostKey: (q: HostKeyQuestion) =>
              ask({
                message: hostKeyQuestionText(q, knownHostsPath),
                confirm: `Trust ${q.keyType} key ${q.fingerprint} for ${q.host}:${q.port}`,
                detail:
                  'Yes: connect and record the key in known_hosts. No: refuse the connection (nothing is sent).',
                timeoutMs: HOST_KEY_QUESTION_TIMEOUT_MS,
              }),
          }
        : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    throw explainRefusal(error, policy, policy === 'ask' ? cannotAsk : undefined, allowed);
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
      ...(params.cols === undefined ? {} : { cols: params.cols }),
      ...(params.rows === undefined ? {} : { rows: params.rows }),
      ...(params.name === undefined ? {} : { name: params.name }),
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
}
