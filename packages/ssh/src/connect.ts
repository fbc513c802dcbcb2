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

import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConchError, ErrorCode, PARAMETER_RULES } from '@conch/core';
import { CONNECT_PROBE, parseConnectProbe, shCommand } from '@conch/core/host';
import { expandHomePath, processFactsOverride } from '@conch/node';
import type { Client, ClientChannel } from 'ssh2';
import { authPlan } from './auth-plan.js';
import { Deadline } from './deadline.js';
import { invalidArgument } from './errors.js';
import { forwardThrough, handshake } from './handshake.js';
import type { HopTarget } from './hop-target.js';
import type { HostKeyQuestion } from './host-key-decision.js';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from './host-key-policies.js';
import { fingerprintOf, keyTypeOf } from './known-hosts.js';
import {
  defaultConfigPath,
  type JumpSpec,
  localUsername,
  parseHostSpec,
  resolveHostConfig,
} from './ssh-config.js';
import { SshDriver } from './ssh-driver.js';

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

/** A duration option under its rule (the one definition of its range and default, in `@conch/core`). */
function checkSeconds(
  name: string,
  value: number | undefined,
  rule: { default: number; min: number; max: number },
): number {
  const { default: fallback, min, max } = rule;
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidArgument(`Invalid ${name}: ${JSON.stringify(value)}; give seconds from ${min} to ${max}.`);
  }
  return value;
}

function checkPort(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < PARAMETER_RULES.port.min || value > PARAMETER_RULES.port.max) {
    const { min, max, default: fallback } = PARAMETER_RULES.port;
    throw invalidArgument(
      `Invalid port: ${JSON.stringify(value)}; give an integer from ${min} to ${max} (default ${fallback}).`,
    );
  }
  return value;
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
    throw invalidArgument(
      `Invalid host: ${JSON.stringify(options.host)}.`,
      'Give a host name, an address, or an alias from ~/.ssh/config.',
    );
  }
  // CONCH_PROCESS_FACTS=ps forces the portable process facts on the far host too (checked before connecting).
  const factsOverride = processFactsOverride();
  const policy = options.hostKeyPolicy ?? 'ask';
  if (!HOST_KEY_POLICIES.includes(policy)) {
    throw invalidArgument(
      `Invalid host_key_policy: ${JSON.stringify(policy)}. Valid policies: ${HOST_KEY_POLICIES.join(', ')}.`,
      '"ask" (default) asks a person about unknown keys; "accept-new" records them; "strict" refuses them; "insecure" accepts them unverified without recording them. A changed key is refused under every policy.',
    );
  }
  const allowed = options.allowedPolicies ?? HOST_KEY_POLICIES;
  if (!allowed.includes(policy)) {
    const forbidden = HOST_KEY_POLICIES.filter((p) => !allowed.includes(p));
    throw invalidArgument(
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
    throw invalidArgument(
      `Invalid keepalive count: ${keepaliveCountMax}; give an integer from 1 to 100 (default 3).`,
    );
  }
  const spec = parseHostSpec(options.host.trim());
  const requestedPort = checkPort(options.port ?? spec.port);
  if (options.username !== undefined && (typeof options.username !== 'string' || options.username === '')) {
    throw invalidArgument(`Invalid username: ${JSON.stringify(options.username)}.`);
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
      if (depth > 8) throw invalidArgument('ProxyJump chain is too deep (more than 8 hops, or a loop).');
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
    const probe = parseConnectProbe(await race(runOnce(main.client, shCommand(CONNECT_PROBE))));
    if (probe === undefined) {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `The login shell of ${target.username} on ${target.hostName} could not run a POSIX sh command.`,
        {
          hint: 'conch needs a POSIX-compatible login shell on the remote host (sh, bash, dash, zsh, ksh); fish and csh/tcsh are not supported as login shells.',
        },
      );
    }
    const privateDir = probe.privateDir;
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
      loginShell: probe.loginShell,
      bashPath: probe.bashPath,
      processFacts: factsOverride ?? probe.facts,
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
