/**
 * One SSH handshake: connects (directly or through a jump host's forwarded stream), verifies the host key
 * under the policy before any credential goes out (`host-key-decision.ts` decides; asking, recording and
 * refusing happen here), and authenticates with the hop's plan.
 */

import { ConchError, ErrorCode } from '@conch/core';
import ssh2, { type AnyAuthMethod, type AuthenticationType, type Client } from 'ssh2';
import type { AuthAttempt } from './auth-plan.js';
import type { Deadline } from './deadline.js';
import type { HopTarget } from './hop-target.js';
import {
  decideAfterAsking,
  decideHostKey,
  type HostKeyAnswer,
  type HostKeyFacts,
  type HostKeyQuestion,
  recordedKeyNote,
} from './host-key-decision.js';
import type { HostKeyPolicy } from './host-key-policies.js';
import { appendKnownHost, knownKeyTypes, loadKnownHosts } from './known-hosts.js';

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
export interface HandshakeParams {
  hop: HopTarget;
  sock: NodeJS.ReadableStream | undefined;
  /** Emptied when the handshake ends, so that the client's listeners keep no credential alive. */
  attempts: AuthAttempt[];
  policy: HostKeyPolicy;
  /** Exactly this key must be presented (extra connections); skips known_hosts. */
  pinnedKey?: Buffer;
  confirmHostKey: ((question: HostKeyQuestion) => Promise<boolean>) | undefined;
  deadline: Deadline;
  keepaliveMs: number;
  keepaliveCountMax: number;
  timeoutS: number;
  track: (client: Client) => void;
  /** Identity files that could not be used (e.g. encrypted without a passphrase), for the failure message. */
  skipped?: string[];
}

/** What one successful handshake gives. */
export interface HandshakeResult {
  client: Client;
  banner: string;
  hostKey: Buffer;
  succeeded: AuthAttempt;
  policyNote?: string;
}

/** Connects, verifies the host key before any credential goes out, and authenticates one hop. */
export function handshake(params: HandshakeParams): Promise<HandshakeResult> {
  const { hop } = params;
  const client = new ssh2.Client();
  params.track(client);
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

  /** Asks a person about an unknown key; the connect deadline waits meanwhile. */
  const ask = async (question: HostKeyQuestion): Promise<HostKeyAnswer> => {
    if (!params.confirmHostKey) return { failed: new Error('nobody can be asked') }; // decideHostKey does not ask then
    params.deadline.pause();
    try {
      return { confirmed: await params.confirmHostKey(question) };
    } catch (error) {
      return { failed: error as Error };
    } finally {
      params.deadline.resume();
    }
  };

  /** Whether to trust the offered key: the host-key decision, carried out (asking, recording). */
  const decide = async (key: Buffer): Promise<boolean> => {
    if (accepted) return accepted.equals(key); // a re-key must present the same key
    const facts: HostKeyFacts = {
      key,
      host: hop.knownHostsHost,
      hostName: hop.hostName,
      port: hop.port,
      jumpHost: hop.jumpHost,
      knownHosts: params.pinnedKey ? [] : loadKnownHosts(hop.knownHostsRead),
      knownHostsFile: hop.knownHostsWrite,
      policy: params.policy,
      canAsk: params.confirmHostKey !== undefined,
      ...(params.pinnedKey ? { pinnedKey: params.pinnedKey } : {}),
    };
    let decision = decideHostKey(facts);
    if (decision.action === 'ask') decision = decideAfterAsking(facts, await ask(decision.question));
    switch (decision.action) {
      case 'accept':
        policyNote = decision.note;
        return true;
      case 'record': {
        let failure: Error | undefined;
        try {
          appendKnownHost(hop.knownHostsWrite, hop.knownHostsHost, hop.port, key, hop.hashKnownHosts);
        } catch (error) {
          failure = error as Error;
        }
        policyNote = `${decision.notePrefix}${recordedKeyNote(facts, failure)}`;
        return true;
      }
      case 'reject':
        return reject(decision.error);
    }
  };

  const known = knownKeyTypes(loadKnownHosts(hop.knownHostsRead), hop.knownHostsHost, hop.port).flatMap(
    (t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t]),
  );
  const preferred = [
    ...new Set([...known.filter((t) => HOST_KEY_ALGORITHMS.includes(t)), ...HOST_KEY_ALGORITHMS]),
  ];

  const forgetCredentials = () => {
    for (const attempt of params.attempts) attempt.wipe?.();
    params.attempts = [];
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
            `Authentication failed for ${hop.username}@${hop.hostName}:${hop.port}${hop.jumpHost ? ' (jump host)' : ''}. Tried: ${methods}.${serverMethods ? ` The server accepts: ${serverMethods.join(', ')}.` : ''}${params.skipped?.length ? ` Not usable: ${params.skipped.join('; ')}.` : ''}`,
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
      fail(connectionError(error, hop, params.timeoutS));
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
      while (index < params.attempts.length) {
        const attempt = params.attempts[index++]!;
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
        ...(params.sock ? { sock: params.sock as never } : {}),
        readyTimeout: 0,
        keepaliveInterval: params.keepaliveMs,
        keepaliveCountMax: params.keepaliveCountMax,
        hostVerifier: verifier,
        authHandler: authHandler as never,
        algorithms: { serverHostKey: preferred as never },
      });
    } catch (error) {
      fail(connectionError(error, hop, params.timeoutS));
    }
  });
}

/** Opens a TCP stream to host:port through an authenticated jump client. */
export function forwardThrough(
  jump: Client,
  hop: HopTarget,
  timeoutS: number,
): Promise<NodeJS.ReadableStream> {
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
