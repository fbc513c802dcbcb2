/**
 * `connectSsh`: every parameter of docs/tools.md `connect_ssh`. Resolves a host alias through the OpenSSH
 * client config (HostName, User, Port, IdentityFile, ProxyJump, UserKnownHostsFile, HashKnownHosts,
 * HostKeyAlias), verifies the host key against known_hosts under the chosen policy BEFORE any credential
 * is sent, authenticates (explicit key, ssh-agent, config/default identity files, password), turns on
 * keepalive, and returns an {@link SshDriver} ready for `SessionManager.openSession`.
 *
 * Errors are `ConchError`s: `SSH_UNREACHABLE` (refused, DNS, no answer within `connectTimeoutS`),
 * `SSH_HOST_KEY_REJECTED` (changed or revoked under every policy, `insecure` included; unknown under
 * strict, or under ask when nobody confirms it), `SSH_AUTH_FAILED` (naming the
 * methods tried, never a secret), `INVALID_ARGUMENT` (bad values, a forbidden policy, a missing key file).
 *
 * Credentials: the password and passphrase are used for the handshake and then dropped. For the extra
 * connections opened past the server's per-connection channel limit, the driver keeps only the method
 * that worked: the ssh-agent socket path, or the parsed private key (in memory, as an agent would);
 * a password is kept only with `retainPasswordForExtraConnections`.
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConchError, ErrorCode, PARAMETER_RULES } from '@conch/core';
import { expandHomePath } from '@conch/node';
import ssh2, {
  type AnyAuthMethod,
  type AuthenticationType,
  type Client,
  type ClientChannel,
  type ParsedKey,
} from 'ssh2';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from './host-key-policies.js';
import {
  appendKnownHost,
  checkHostKey,
  fingerprintOf,
  keyTypeOf,
  knownHostsName,
  knownKeyTypes,
  loadKnownHosts,
} from './known-hosts.js';
import { CONNECT_PROBE, shCommand } from './remote-scripts.js';
import {
  defaultConfigPath,
  type JumpSpec,
  localUsername,
  parseHostSpec,
  resolveHostConfig,
} from './ssh-config.js';
import { SshDriver } from './ssh-driver.js';

/** What `confirmHostKey` is asked about: an unknown host key. */
export interface HostKeyQuestion {
  /** The host as known_hosts names it (HostName or HostKeyAlias). */
  host: string;
  port: number;
  /** `SHA256:…` as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** e.g. `ssh-ed25519`. */
  keyType: string;
  /** True for a ProxyJump hop rather than the target. */
  jumpHost: boolean;
}

/** Options of {@link connectSsh}: docs/tools.md `connect_ssh` in camelCase, plus the operator's and the face's hooks. */
export interface ConnectSshOptions {
  /** Host name, address, or an alias from the ssh config; `user@host:port` is accepted too. */
  host: string;
  /** Default: the config's Port, else 22. */
  port?: number;
  /** Default: the config's User, else the local user. */
  username?: string;
  /** Password authentication (tried last). Never logged, returned, or kept (see the module doc). */
  password?: string;
  /** A private key file (OpenSSH, PEM or PuTTY format). */
  privateKeyPath?: string;
  /** Decrypts `privateKeyPath` (or the config's IdentityFile keys when no path is given). */
  passphrase?: string;
  /** Use the ssh-agent at `agentSocket` / `$SSH_AUTH_SOCK` (default true). */
  useAgent?: boolean;
  /** ssh-agent socket (default `$SSH_AUTH_SOCK`). */
  agentSocket?: string;
  /** Default `ask`. */
  hostKeyPolicy?: HostKeyPolicy;
  /** The known_hosts file read and written (default: the config's UserKnownHostsFile, else ~/.ssh/known_hosts). */
  knownHostsPath?: string;
  /** Also read (never written); default `/etc/ssh/ssh_known_hosts`. */
  globalKnownHostsPath?: string | null;
  /** Seconds to reach the host, exchange keys and authenticate (default 20; time spent in `confirmHostKey` does not count). */
  connectTimeoutS?: number;
  /** Seconds between keepalive requests (default 15; 0 turns keepalive off). */
  keepaliveIntervalS?: number;
  /** Unanswered keepalives before the connection counts as lost (default 3). */
  keepaliveCountMax?: number;
  /** The ssh client config (default ~/.ssh/config; null ignores any config). */
  configPath?: string | null;
  /**
   * Asks a person whether to trust an unknown host key (policy `ask`): the MCP face uses elicitation,
   * the CLI its TTY. Without it, `ask` refuses unknown keys with the fingerprint and a hint.
   */
  confirmHostKey?: (question: HostKeyQuestion) => Promise<boolean>;
  /** Policies the operator permits (default: all). Asking for another is `INVALID_ARGUMENT`. */
  allowedPolicies?: readonly HostKeyPolicy[];
  /**
   * Keep the password in memory for the driver's life so that extra connections (past the server's
   * MaxSessions) can authenticate with it. Default false: docs/tools.md says passwords are not kept.
   */
  retainPasswordForExtraConnections?: boolean;
  /** Cancels the attempt (the MCP request was cancelled). */
  signal?: AbortSignal;
}

/** What {@link connectSsh} returns. */
export interface SshConnection {
  /** The driver, ready for `SessionManager.openSession(driver, { kind: 'ssh', … })`. */
  driver: SshDriver;
  /** The server's pre-authentication banner (sshd `Banner`), or an empty string. */
  banner: string;
  /** The host key's `SHA256:…` fingerprint. */
  hostKeyFingerprint: string;
  /** The host key's type, e.g. `ssh-ed25519`. */
  hostKeyType: string;
  /** The user logged in as. */
  username: string;
  /** The host as asked for (possibly an alias). */
  host: string;
  /** The address connected to (the config's HostName). */
  hostName: string;
  port: number;
  /** ProxyJump hops used, outermost first (`user@host:port`). */
  via: string[];
  /** What the host key policy did that the person should know: an insecure accept, a key recorded. */
  policyNote?: string;
}

/** An authentication attempt in the order they are tried. */
interface AuthAttempt {
  /** For messages: `publickey (/path)`, `publickey (ssh-agent)`, `password`. */
  label: string;
  /** The server-side method it needs. */
  method: 'publickey' | 'password';
  make: (username: string) => AnyAuthMethod;
  /** True when an extra connection may reuse this attempt after it succeeded. */
  reusable: boolean;
  /** Zeroes the secret bytes handed to ssh2 (run when a handshake ends). */
  wipe?: () => void;
}

/** One resolved hop (a jump host or the target). */
interface HopTarget {
  /** As named (alias or spec). */
  name: string;
  hostName: string;
  port: number;
  username: string;
  /** The name known_hosts uses (HostKeyAlias or HostName). */
  knownHostsHost: string;
  identityFiles: string[];
  knownHostsWrite: string;
  knownHostsRead: string[];
  hashKnownHosts: boolean;
  jumpHost: boolean;
}

/** Default identity files OpenSSH tries when none is configured. */
const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

/** ssh2's default host key algorithms (with ed25519), reordered to prefer the types known_hosts holds. */
const HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

function invalid(message: string, hint?: string): ConchError {
  return new ConchError(ErrorCode.INVALID_ARGUMENT, message, hint === undefined ? {} : { hint });
}

/** A duration option under its rule (the one definition of its range and default, in `@conch/core`). */
function checkSeconds(
  name: string,
  value: number | undefined,
  rule: { default: number; min: number; max: number },
): number {
  const { default: fallback, min, max } = rule;
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(`Invalid ${name}: ${JSON.stringify(value)}; give seconds from ${min} to ${max}.`);
  }
  return value;
}

function checkPort(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < PARAMETER_RULES.port.min || value > PARAMETER_RULES.port.max) {
    const { min, max, default: fallback } = PARAMETER_RULES.port;
    throw invalid(
      `Invalid port: ${JSON.stringify(value)}; give an integer from ${min} to ${max} (default ${fallback}).`,
    );
  }
  return value;
}

/** A deadline that can be paused (while a person confirms a host key). */
class Deadline {
  private remaining: number;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private paused = 0;
  private readonly onExpire: () => void;
  expired = false;

  constructor(ms: number, onExpire: () => void) {
    this.remaining = ms;
    this.onExpire = onExpire;
    this.arm();
  }

  private arm(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => {
      this.expired = true;
      this.onExpire();
    }, this.remaining);
  }

  pause(): void {
    if (this.paused++ > 0 || this.expired) return;
    clearTimeout(this.timer);
    this.remaining = Math.max(0, this.remaining - (Date.now() - this.startedAt));
  }

  resume(): void {
    if (--this.paused > 0 || this.expired) return;
    this.arm();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.expired = true;
  }
}

/** Reads and parses a private key; errors are ConchErrors for an explicit path, undefined otherwise. */
function loadKey(
  path: string,
  passphrase: string | undefined,
  explicit: boolean,
): { key: ParsedKey } | { skipped: string } {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    if (explicit) {
      throw invalid(
        `Invalid private_key_path: cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
        'Give the path of a readable private key file.',
      );
    }
    return { skipped: 'unreadable' };
  }
  // A Buffer copy of the passphrase, zeroed right after use.
  const secret = passphrase === undefined ? undefined : Buffer.from(passphrase, 'utf8');
  const parsed = ssh2.utils.parseKey(data, secret);
  secret?.fill(0);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key instanceof Error || key === undefined) {
    const message = key instanceof Error ? key.message : 'no key';
    const encrypted = /encrypted|passphrase|decrypt/i.test(message);
    if (explicit) {
      throw new ConchError(
        ErrorCode.SSH_AUTH_FAILED,
        encrypted
          ? passphrase === undefined
            ? `The private key ${path} is encrypted and no passphrase was given.`
            : `The passphrase does not decrypt the private key ${path}.`
          : `Cannot use the private key ${path}: ${message}.`,
        {
          hint: encrypted
            ? 'Give the right passphrase, or use the ssh-agent (use_agent).'
            : 'Give an OpenSSH, PEM or PuTTY private key.',
        },
      );
    }
    return { skipped: encrypted ? 'encrypted' : 'unparseable' };
  }
  if (!key.isPrivateKey()) {
    if (explicit) throw invalid(`Invalid private_key_path: ${path} holds a public key, not a private one.`);
    return { skipped: 'not a private key' };
  }
  return { key };
}

/** The agent socket to use, or undefined. */
function agentPath(options: ConnectSshOptions): string | undefined {
  if (options.useAgent === false) return undefined;
  const socket = options.agentSocket ?? process.env.SSH_AUTH_SOCK;
  return socket && existsSync(socket) ? socket : undefined;
}

/** Builds the ordered attempts for one hop. The password only ever goes to the target. */
function authPlan(
  options: ConnectSshOptions,
  hop: HopTarget,
  withPassword: boolean,
  skipped: string[],
): AuthAttempt[] {
  const attempts: AuthAttempt[] = [];
  const addKey = (path: string, key: ParsedKey) => {
    const attempt: AuthAttempt = {
      label: `publickey (${path})`,
      method: 'publickey',
      make: (username) => ({ type: 'publickey', username, key }),
      reusable: true,
    };
    attempts.push(attempt);
  };
  if (options.privateKeyPath !== undefined) {
    const path = expandHomePath(options.privateKeyPath);
    const loaded = loadKey(path, options.passphrase, !hop.jumpHost);
    if ('key' in loaded) addKey(path, loaded.key);
  }
  const agent = agentPath(options);
  if (agent) {
    attempts.push({
      label: 'publickey (ssh-agent)',
      method: 'publickey',
      make: (username) => ({ type: 'agent', username, agent }),
      reusable: true,
    });
  }
  const files =
    hop.identityFiles.length > 0
      ? hop.identityFiles
      : options.privateKeyPath === undefined
        ? DEFAULT_IDENTITIES.map((f) => join(homedir(), '.ssh', f)).filter((f) => existsSync(f))
        : [];
  for (const file of files) {
    if (options.privateKeyPath !== undefined && expandHomePath(options.privateKeyPath) === file) continue;
    const loaded = loadKey(
      file,
      options.privateKeyPath === undefined ? options.passphrase : undefined,
      false,
    );
    if ('key' in loaded) addKey(file, loaded.key);
    else if (loaded.skipped !== 'unreadable') skipped.push(`${file} (${loaded.skipped})`);
  }
  if (withPassword && options.password !== undefined) {
    const password = options.password;
    // ssh2 takes a Buffer too: hand it a copy that is zeroed once the handshake ends, so that no live
    // object (ssh2 keeps its last auth request) holds the password after connecting.
    const copies: Buffer[] = [];
    attempts.push({
      label: 'password',
      method: 'password',
      make: (username) => {
        const copy = Buffer.from(password, 'utf8');
        copies.push(copy);
        return { type: 'password', username, password: copy as unknown as string };
      },
      reusable: options.retainPasswordForExtraConnections === true,
      wipe: () => {
        for (const copy of copies.splice(0)) copy.fill(0);
      },
    });
  }
  return attempts;
}

/** Maps an ssh2 connection error to docs/tools.md. */
function connectionError(error: unknown, hop: HopTarget, timeoutS: number): ConchError {
  if (ConchError.is(error)) return error;
  const e = error as Error & { level?: string; code?: string };
  const where = `${hop.hostName}:${hop.port}${hop.jumpHost ? ' (jump host)' : ''}`;
  const codes: Record<string, string> = {
    ECONNREFUSED: 'connection refused: nothing listens there',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
    ENOTFOUND: 'unknown host name',
    EAI_AGAIN: 'host name lookup failed',
    ECONNRESET: 'connection reset',
  };
  const detail = (e.code && codes[e.code]) ?? e.message ?? String(error);
  return new ConchError(ErrorCode.SSH_UNREACHABLE, `Cannot reach ${where}: ${detail}.`, {
    hint: `Check the host name and port, that sshd runs there, and the network. connect_timeout is ${timeoutS} s.`,
    data: { host: hop.hostName, port: hop.port, ...(e.code ? { code: e.code } : {}) },
    cause: error,
  });
}

/** Everything a handshake needs for one hop. */
interface HandshakeParams {
  hop: HopTarget;
  sock: NodeJS.ReadableStream | undefined;
  /** Emptied when the handshake ends, so that the client's listeners keep no credential alive. */
  attempts: AuthAttempt[];
  policy: HostKeyPolicy;
  /** Exactly this key must be presented (extra connections); skips known_hosts. */
  pinnedKey?: Buffer;
  confirmHostKey: ConnectSshOptions['confirmHostKey'];
  deadline: Deadline;
  keepaliveMs: number;
  keepaliveCountMax: number;
  timeoutS: number;
  track: (client: Client) => void;
  /** Identity files that could not be used (e.g. encrypted without a passphrase), for the failure message. */
  skipped?: string[];
}

/** What one successful handshake gives. */
interface HandshakeResult {
  client: Client;
  banner: string;
  hostKey: Buffer;
  succeeded: AuthAttempt;
  policyNote?: string;
}

/** Connects, verifies the host key before any credential goes out, and authenticates one hop. */
function handshake(p: HandshakeParams): Promise<HandshakeResult> {
  const { hop } = p;
  const client = new ssh2.Client();
  p.track(client);
  let banner = '';
  let rejection: ConchError | undefined;
  let accepted: Buffer | undefined;
  let policyNote: string | undefined;
  let current: AuthAttempt | undefined;
  const tried: string[] = [];
  let serverMethods: string[] | undefined;
  let index = 0;

  const reject = (error: ConchError): false => {
    rejection = error;
    return false;
  };

  const decide = async (key: Buffer): Promise<boolean> => {
    const fingerprint = fingerprintOf(key);
    const keyType = keyTypeOf(key);
    const where = knownHostsName(hop.knownHostsHost, hop.port);
    if (accepted) return accepted.equals(key); // a re-key must present the same key
    if (p.pinnedKey) {
      if (p.pinnedKey.equals(key)) return true;
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `The host key of ${where} changed while connected: it was ${fingerprintOf(p.pinnedKey)}, now ${fingerprint}.`,
          {
            data: { host: where, fingerprint, known_fingerprints: [fingerprintOf(p.pinnedKey)] },
          },
        ),
      );
    }
    const entries = loadKnownHosts(hop.knownHostsRead);
    const status = checkHostKey(entries, hop.knownHostsHost, hop.port, key);
    if (status.status === 'known') return true;
    if (status.status === 'revoked') {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `The host key ${fingerprint} of ${where} is marked @revoked in known_hosts.`,
          {
            hint: "The key was revoked on purpose; ask the host's administrator.",
            data: { host: where, fingerprint },
          },
        ),
      );
    }
    if (status.status === 'changed') {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `HOST KEY CHANGED for ${where}: the server presents ${keyType} key ${fingerprint}, but known_hosts has ${status.knownFingerprints.join(', ')} (${status.sources.join(', ')}). Someone may be intercepting the connection, or the host was re-installed.`,
          {
            hint: `A changed key is refused under every host_key_policy (insecure included). If the change is expected, remove the old key (ssh-keygen -R '${where}' -f ${hop.knownHostsWrite}) and connect again. No credential was sent.`,
            data: {
              host: where,
              fingerprint,
              key_type: keyType,
              known_fingerprints: status.knownFingerprints,
              known_hosts: status.sources,
            },
          },
        ),
      );
    }
    // Unknown key.
    if (p.policy === 'insecure') {
      policyNote = `host_key_policy "insecure": accepted unknown ${keyType} key ${fingerprint} for ${where} WITHOUT verification; nothing was recorded.`;
      return true;
    }
    const record = (): string => {
      try {
        appendKnownHost(hop.knownHostsWrite, hop.knownHostsHost, hop.port, key, hop.hashKnownHosts);
        return `recorded new ${keyType} key ${fingerprint} for ${where} in ${hop.knownHostsWrite}.`;
      } catch (error) {
        return `accepted new ${keyType} key ${fingerprint} for ${where}, but could not record it in ${hop.knownHostsWrite}: ${(error as Error).message}.`;
      }
    };
    const data = { host: where, fingerprint, key_type: keyType };
    if (p.policy === 'accept-new') {
      policyNote = `host_key_policy "accept-new": ${record()}`;
      return true;
    }
    if (p.policy === 'strict') {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `Unknown host key for ${where}: ${keyType} ${fingerprint} is not in known_hosts and host_key_policy is "strict".`,
          {
            hint: `Verify the fingerprint with the host's administrator, then add the key to ${hop.knownHostsWrite} (e.g. ssh-keyscan -p ${hop.port} ${hop.hostName}) or connect once with host_key_policy "accept-new".`,
            data,
          },
        ),
      );
    }
    // ask
    if (!p.confirmHostKey) {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `Unknown host key for ${where}: ${keyType} ${fingerprint}. conch could not ask a person to confirm it.`,
          {
            hint: `Verify the fingerprint, then connect with host_key_policy "accept-new" (records it) or add it to ${hop.knownHostsWrite}.`,
            data,
          },
        ),
      );
    }
    p.deadline.pause();
    let yes: boolean;
    try {
      yes = await p.confirmHostKey({
        host: hop.knownHostsHost,
        port: hop.port,
        fingerprint,
        keyType,
        jumpHost: hop.jumpHost,
      });
    } catch (error) {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `Unknown host key for ${where}: ${keyType} ${fingerprint}; asking for confirmation failed: ${(error as Error).message}.`,
          {
            hint: `Connect with host_key_policy "accept-new" or add the key to ${hop.knownHostsWrite}.`,
            data,
          },
        ),
      );
    } finally {
      p.deadline.resume();
    }
    if (!yes) {
      return reject(
        new ConchError(
          ErrorCode.SSH_HOST_KEY_REJECTED,
          `The host key ${keyType} ${fingerprint} of ${where} was not accepted.`,
          { data },
        ),
      );
    }
    policyNote = `host key confirmed by the user: ${record()}`;
    return true;
  };

  const known = knownKeyTypes(loadKnownHosts(hop.knownHostsRead), hop.knownHostsHost, hop.port).flatMap(
    (t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]),
  );
  const preferred = [
    ...new Set([...known.filter((t) => HOST_KEY_ALGORITHMS.includes(t)), ...HOST_KEY_ALGORITHMS]),
  ];

  const forgetCredentials = () => {
    for (const attempt of p.attempts) attempt.wipe?.();
    p.attempts = [];
    current = undefined;
  };

  return new Promise<HandshakeResult>((resolve, rejectPromise) => {
    let settled = false;
    const fail = (error: ConchError) => {
      if (settled) return;
      settled = true;
      forgetCredentials();
      client.destroy();
      rejectPromise(error);
    };
    client.on('banner', (message: string) => {
      banner += message;
    });
    client.on('ready', () => {
      if (settled || !current || !accepted) return;
      settled = true;
      const succeeded = current;
      forgetCredentials();
      resolve({ client, banner, hostKey: accepted, succeeded, ...(policyNote ? { policyNote } : {}) });
    });
    client.on('error', (error: Error & { level?: string }) => {
      if (rejection) return fail(rejection);
      if (error.level === 'client-authentication') {
        const methods =
          tried.length > 0 ? tried.join(', ') : 'none (no password, key or agent was available)';
        fail(
          new ConchError(
            ErrorCode.SSH_AUTH_FAILED,
            `Authentication failed for ${hop.username}@${hop.hostName}:${hop.port}${hop.jumpHost ? ' (jump host)' : ''}. Tried: ${methods}.${serverMethods ? ` The server accepts: ${serverMethods.join(', ')}.` : ''}${p.skipped?.length ? ` Not usable: ${p.skipped.join('; ')}.` : ''}`,
            {
              hint: 'Check the username, then give password, private_key_path (+ passphrase) or an ssh-agent with the right key (use_agent).',
              data: {
                username: hop.username,
                host: hop.hostName,
                port: hop.port,
                methods_tried: tried,
                ...(serverMethods ? { server_methods: serverMethods } : {}),
              },
            },
          ),
        );
        return;
      }
      fail(connectionError(error, hop, p.timeoutS));
    });
    client.on('close', () => {
      if (rejection) return fail(rejection);
      fail(
        new ConchError(
          ErrorCode.SSH_UNREACHABLE,
          `The connection to ${hop.hostName}:${hop.port} closed during the SSH handshake.`,
          {
            hint: 'The server dropped the connection (too many unauthenticated connections, a firewall, or not an SSH server).',
          },
        ),
      );
    });
    const verifier = (key: Buffer, verify: (valid: boolean) => void) => {
      decide(key).then(
        (ok) => {
          if (ok) accepted ??= Buffer.from(key);
          verify(ok);
        },
        (error: unknown) => {
          reject(
            new ConchError(
              ErrorCode.SSH_HOST_KEY_REJECTED,
              `Host key check failed: ${(error as Error).message}`,
            ),
          );
          verify(false);
        },
      );
    };
    const authHandler = (
      methodsLeft: AuthenticationType[] | null,
      _partial: boolean | null,
      next: (m: AnyAuthMethod | false) => void,
    ) => {
      if (methodsLeft) serverMethods = methodsLeft;
      while (index < p.attempts.length) {
        const attempt = p.attempts[index++]!;
        if (methodsLeft && !methodsLeft.includes(attempt.method)) continue;
        current = attempt;
        tried.push(attempt.label);
        next(attempt.make(hop.username));
        return;
      }
      current = undefined;
      next(false);
    };
    try {
      client.connect({
        host: hop.hostName,
        port: hop.port,
        username: hop.username,
        ...(p.sock ? { sock: p.sock as never } : {}),
        readyTimeout: 0,
        keepaliveInterval: p.keepaliveMs,
        keepaliveCountMax: p.keepaliveCountMax,
        hostVerifier: verifier,
        authHandler: authHandler as never,
        algorithms: { serverHostKey: preferred as never },
      });
    } catch (error) {
      fail(connectionError(error, hop, p.timeoutS));
    }
  });
}

/** Opens a TCP stream to host:port through an authenticated jump client. */
function forwardThrough(jump: Client, hop: HopTarget, timeoutS: number): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => {
    try {
      jump.forwardOut('127.0.0.1', 0, hop.hostName, hop.port, (error, stream) => {
        if (error) {
          reject(
            new ConchError(
              ErrorCode.SSH_UNREACHABLE,
              `The jump host could not reach ${hop.hostName}:${hop.port}: ${error.message}.`,
              {
                hint: `Check the target's HostName and Port as the jump host sees them, and that the jump host allows TCP forwarding. connect_timeout is ${timeoutS} s.`,
                cause: error,
              },
            ),
          );
        } else resolve(stream);
      });
    } catch (error) {
      reject(connectionError(error, hop, timeoutS));
    }
  });
}

/**
 * Connects to an SSH host (see the module doc) and returns a driver for it.
 *
 * @example
 * const ssh = await connectSsh({ host: 'build-box', hostKeyPolicy: 'accept-new' });
 * const session = await manager.openSession(ssh.driver, { kind: 'ssh', host: ssh.host, port: ssh.port, username: ssh.username });
 */
export async function connectSsh(options: ConnectSshOptions): Promise<SshConnection> {
  if (typeof options.host !== 'string' || options.host.trim() === '' || /\s/.test(options.host.trim())) {
    throw invalid(
      `Invalid host: ${JSON.stringify(options.host)}.`,
      'Give a host name, an address, or an alias from ~/.ssh/config.',
    );
  }
  const policy = options.hostKeyPolicy ?? 'ask';
  if (!HOST_KEY_POLICIES.includes(policy)) {
    throw invalid(
      `Invalid host_key_policy: ${JSON.stringify(policy)}. Valid policies: ${HOST_KEY_POLICIES.join(', ')}.`,
      '"ask" (default) asks a person about unknown keys; "accept-new" records them; "strict" refuses them; "insecure" accepts them unverified without recording them. A changed key is refused under every policy.',
    );
  }
  const allowed = options.allowedPolicies ?? HOST_KEY_POLICIES;
  if (!allowed.includes(policy)) {
    const forbidden = HOST_KEY_POLICIES.filter((p) => !allowed.includes(p));
    throw invalid(
      `host_key_policy "${policy}" is forbidden by the server's configuration (forbidden: ${forbidden.join(', ')}).`,
      `Allowed policies: ${allowed.join(', ')}.`,
    );
  }
  const timeoutS = checkSeconds('connect_timeout', options.connectTimeoutS, PARAMETER_RULES.connect_timeout);
  const keepaliveS = checkSeconds(
    'keepalive_interval',
    options.keepaliveIntervalS,
    PARAMETER_RULES.keepalive_interval,
  );
  const keepaliveCountMax = options.keepaliveCountMax ?? 3;
  if (!Number.isInteger(keepaliveCountMax) || keepaliveCountMax < 1 || keepaliveCountMax > 100) {
    throw invalid(
      `Invalid keepalive count: ${keepaliveCountMax}; give an integer from 1 to 100 (default 3).`,
    );
  }
  const spec = parseHostSpec(options.host.trim());
  const requestedPort = checkPort(options.port ?? spec.port);
  if (options.username !== undefined && (typeof options.username !== 'string' || options.username === '')) {
    throw invalid(`Invalid username: ${JSON.stringify(options.username)}.`);
  }
  const configPath = options.configPath === undefined ? defaultConfigPath() : options.configPath;
  const globalKnownHosts =
    options.globalKnownHostsPath === undefined ? '/etc/ssh/ssh_known_hosts' : options.globalKnownHostsPath;

  const resolveHop = (
    name: string,
    port: number | undefined,
    username: string | undefined,
    jumpHost: boolean,
  ): HopTarget & { jumps: JumpSpec[] } => {
    const cfg = resolveHostConfig(name, configPath, {
      ...(port === undefined ? {} : { port }),
      ...(username === undefined ? {} : { user: username }),
    });
    const finalPort = port ?? cfg.port ?? PARAMETER_RULES.port.default;
    const knownHostsWrite = expandHomePath(
      (jumpHost ? undefined : options.knownHostsPath) ??
        cfg.knownHostsFiles[0] ??
        options.knownHostsPath ??
        join(homedir(), '.ssh', 'known_hosts'),
    );
    return {
      name,
      hostName: cfg.hostName,
      port: finalPort,
      username: username ?? cfg.user ?? localUsername(),
      knownHostsHost: cfg.hostKeyAlias ?? cfg.hostName,
      identityFiles: cfg.identityFiles,
      knownHostsWrite,
      knownHostsRead: [
        knownHostsWrite,
        ...cfg.knownHostsFiles.slice(1),
        ...(globalKnownHosts ? [globalKnownHosts] : []),
      ],
      hashKnownHosts: cfg.hashKnownHosts,
      jumpHost,
      jumps: cfg.proxyJump,
    };
  };

  const target = resolveHop(spec.host, requestedPort, options.username ?? spec.username, false);
  const created: Client[] = [];
  const track = (client: Client) => {
    created.push(client);
    client.on('error', () => {}); // errors are handled per step; never an unhandled 'error' event
  };
  let expire: (error: ConchError) => void = () => {};
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  expired.catch(() => {});
  const deadline = new Deadline(timeoutS * 1000, () => {
    expire(
      new ConchError(
        ErrorCode.SSH_UNREACHABLE,
        `Could not connect to ${target.hostName}:${target.port} within connect_timeout (${timeoutS} s).`,
        {
          hint: 'The host does not answer (down, firewalled, or a slow link). Check host and port, or raise connect_timeout.',
          data: { host: target.hostName, port: target.port },
        },
      ),
    );
  });
  const onAbort = () =>
    expire(
      new ConchError(ErrorCode.INVALID_ARGUMENT, 'Connecting over SSH was cancelled; nothing was connected.'),
    );
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const race = <T>(step: Promise<T>): Promise<T> => {
    step.catch(() => {});
    return Promise.race([step, expired]);
  };

  // Never put `options` (it holds the password) where the reconnect closure can reach it.
  const common = {
    confirmHostKey: options.confirmHostKey,
    deadline,
    keepaliveMs: Math.round(keepaliveS * 1000),
    keepaliveCountMax,
    timeoutS,
    track,
  };
  const notes: string[] = [];
  const via: string[] = [];
  const dependencies: Client[] = [];
  try {
    // ProxyJump hops, outermost first (a hop's own ProxyJump is honoured when it is the first hop).
    let previous: Client | undefined;
    const hops: JumpSpec[] = [];
    const seen = new Set<string>([target.name]);
    const expandJumps = (jumps: JumpSpec[], depth: number) => {
      if (depth > 8) throw invalid('ProxyJump chain is too deep (more than 8 hops, or a loop).');
      for (const jump of jumps) {
        if (hops.length === 0) {
          const cfg = resolveHop(jump.host, jump.port, jump.username, true);
          if (cfg.jumps.length > 0 && !seen.has(jump.host)) {
            seen.add(jump.host);
            expandJumps(cfg.jumps, depth + 1);
          }
        }
        hops.push(jump);
      }
    };
    expandJumps(target.jumps, 0);
    for (const jump of hops) {
      const hop = resolveHop(jump.host, jump.port, jump.username, true);
      const sock = previous ? await race(forwardThrough(previous, hop, timeoutS)) : undefined;
      const skipped: string[] = [];
      const plan = authPlan(options, hop, false, skipped);
      const result = await race(handshake({ ...common, hop, sock, attempts: plan, policy, skipped }));
      previous = result.client;
      dependencies.push(result.client);
      via.push(`${hop.username}@${hop.hostName}:${hop.port}`);
      if (result.policyNote) notes.push(`jump host: ${result.policyNote}`);
    }
    const sock = previous ? await race(forwardThrough(previous, target, timeoutS)) : undefined;
    const skipped: string[] = [];
    const plan = authPlan(options, target, true, skipped);
    const main = await race(handshake({ ...common, hop: target, sock, attempts: plan, policy, skipped }));
    // Probe: the private directory and the login shell.
    const probe = await race(runOnce(main.client, shCommand(CONNECT_PROBE)));
    const values = new Map<string, string>();
    for (const line of probe.split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
    }
    const privateDir = values.get('dir') ?? '';
    if (values.size === 0) {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `The login shell of ${target.username} on ${target.hostName} could not run a POSIX sh command.`,
        {
          hint: 'conch needs a POSIX-compatible login shell on the remote host (sh, bash, dash, zsh, ksh); fish and csh/tcsh are not supported as login shells.',
        },
      );
    }
    if (!privateDir.startsWith('/')) {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `Could not create a private directory on ${target.hostName} (mktemp -d failed).`,
        {
          hint: 'The remote host needs a writable $TMPDIR or /tmp and the mktemp program.',
        },
      );
    }
    deadline.clear();
    options.signal?.removeEventListener('abort', onAbort);

    // Extra connections reuse only what worked: the agent path or the parsed key (no passphrase), and the
    // password only when the operator allows it. The host key must be exactly the one verified now.
    const succeeded = main.succeeded;
    const lastHop = previous;
    const reconnect = succeeded.reusable
      ? async (): Promise<Client> => {
          const clients: Client[] = [];
          let timer: NodeJS.Timeout | undefined;
          const extraDeadline = new Deadline(timeoutS * 1000, () => {});
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  new ConchError(
                    ErrorCode.SSH_UNREACHABLE,
                    `Another connection to ${target.hostName}:${target.port} did not complete within ${timeoutS} s.`,
                  ),
                ),
              timeoutS * 1000,
            );
          });
          const attempt = async () => {
            const extraSock = lastHop ? await forwardThrough(lastHop, target, timeoutS) : undefined;
            const extra = await handshake({
              ...common,
              deadline: extraDeadline,
              track: (client) => {
                clients.push(client);
                client.on('error', () => {});
              },
              hop: target,
              sock: extraSock,
              attempts: [succeeded],
              policy,
              pinnedKey: main.hostKey,
            });
            return extra.client;
          };
          try {
            return await Promise.race([attempt(), timeout]);
          } catch (error) {
            for (const client of clients) client.destroy();
            throw error;
          } finally {
            clearTimeout(timer);
            extraDeadline.clear();
          }
        }
      : undefined;
    const driver = new SshDriver({
      client: main.client,
      host: spec.host,
      hostName: target.hostName,
      port: target.port,
      username: target.username,
      privateDir,
      loginShell: values.get('shell') ?? '',
      bashPath: values.get('bash') ?? '',
      reconnect,
      ...(reconnect
        ? {}
        : {
            reconnectUnavailableReason:
              'conch does not keep the password needed to open another connection (retainPasswordForExtraConnections is off)',
          }),
      dependencies,
    });
    const policyNotes = [main.policyNote, ...notes].filter(Boolean);
    return {
      driver,
      banner: main.banner,
      hostKeyFingerprint: fingerprintOf(main.hostKey),
      hostKeyType: keyTypeOf(main.hostKey),
      username: target.username,
      host: spec.host,
      hostName: target.hostName,
      port: target.port,
      via,
      ...(policyNotes.length > 0 ? { policyNote: policyNotes.join(' ') } : {}),
    };
  } catch (error) {
    deadline.clear();
    options.signal?.removeEventListener('abort', onAbort);
    for (const client of created) client.destroy();
    throw error;
  }
}

/** Runs one command on a fresh channel and returns its stdout (used for the connect probe). */
function runOnce(client: Client, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onChannel = (error: Error | undefined, channel: ClientChannel) => {
      if (error) {
        reject(
          new ConchError(ErrorCode.INTERNAL, `Could not run the connect probe: ${error.message}`, {
            cause: error,
          }),
        );
        return;
      }
      const out: Buffer[] = [];
      channel.on('data', (d: Buffer) => out.push(d));
      channel.stderr.on('data', () => {});
      channel.on('error', () => {});
      channel.on('close', () => resolve(Buffer.concat(out).toString('utf8')));
      channel.end();
    };
    try {
      client.exec(command, onChannel);
    } catch (error) {
      reject(
        new ConchError(ErrorCode.INTERNAL, `Could not run the connect probe: ${(error as Error).message}`, {
          cause: error,
        }),
      );
    }
  });
}
