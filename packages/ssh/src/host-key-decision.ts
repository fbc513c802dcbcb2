/**
 * The host-key decision of `connect_ssh` (docs/tools.md), as a pure function of what it depends on: the key
 * the server offers, the known_hosts entries, the policy, and whether a person can be asked. It decides and
 * words the outcome; the handshake does what it says (asks, records the key, refuses) before any credential
 * is sent.
 *
 * A known key is accepted under every policy; a changed or `@revoked` key is refused under every policy,
 * `insecure` included. An unknown key is asked about (`ask`), recorded (`accept-new`), refused (`strict`) or
 * accepted unverified without recording it (`insecure`).
 */

import { ConchError, ErrorCode } from '@conch/core';
import type { HostKeyPolicy } from './host-key-policies.js';
import {
  checkHostKey,
  fingerprintOf,
  type KnownHostEntry,
  keyTypeOf,
  knownHostsName,
} from './known-hosts.js';

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

/** Everything the host-key decision depends on. */
export interface HostKeyFacts {
  /** The key the server offers (its public key blob). */
  readonly key: Buffer;
  /** The host as known_hosts names it (HostName or HostKeyAlias). */
  readonly host: string;
  /** The address connected to (named in the `ssh-keyscan` hint). */
  readonly hostName: string;
  readonly port: number;
  /** True for a ProxyJump hop rather than the target. */
  readonly jumpHost: boolean;
  /** The known_hosts entries read (not consulted when `pinnedKey` is given). */
  readonly knownHosts: readonly KnownHostEntry[];
  /** The known_hosts file a new key is recorded in (named in hints and notes). */
  readonly knownHostsFile: string;
  readonly policy: HostKeyPolicy;
  /** Whether a person can be asked to confirm an unknown key (a `confirmHostKey` hook exists). */
  readonly canAsk: boolean;
  /** For another connection to a host already verified: exactly this key must be offered. */
  readonly pinnedKey?: Buffer;
}

/** What to do with the offered key. */
export type HostKeyDecision =
  /** Trust it; `note` is what the person should know (an unverified accept). */
  | { readonly action: 'accept'; readonly note?: string }
  /** Trust it and record it in known_hosts; the note is `notePrefix` + {@link recordedKeyNote}. */
  | { readonly action: 'record'; readonly notePrefix: string }
  /** Ask a person `question`, then decide with {@link decideAfterAsking}. */
  | { readonly action: 'ask'; readonly question: HostKeyQuestion }
  /** Refuse it: the connection fails with `error` (`SSH_HOST_KEY_REJECTED`); no credential was sent. */
  | { readonly action: 'reject'; readonly error: ConchError };

/** A decision that needs no more asking. */
export type SettledHostKeyDecision = Exclude<HostKeyDecision, { readonly action: 'ask' }>;

/** What the person asked about an unknown key said, or how asking failed. */
export type HostKeyAnswer = { readonly confirmed: boolean } | { readonly failed: Error };

/** Decides about the key the server offers (see the module doc). */
export function decideHostKey(facts: HostKeyFacts): HostKeyDecision {
  const { key, policy } = facts;
  const fingerprint = fingerprintOf(key);
  const keyType = keyTypeOf(key);
  const where = knownHostsName(facts.host, facts.port);
  if (facts.pinnedKey !== undefined) {
    if (facts.pinnedKey.equals(key)) return { action: 'accept' };
    return rejected(
      `The host key of ${where} changed while connected: it was ${fingerprintOf(facts.pinnedKey)}, now ${fingerprint}.`,
      { data: { host: where, fingerprint, known_fingerprints: [fingerprintOf(facts.pinnedKey)] } },
    );
  }
  const status = checkHostKey(facts.knownHosts, facts.host, facts.port, key);
  if (status.status === 'known') return { action: 'accept' };
  if (status.status === 'revoked') {
    return rejected(`The host key ${fingerprint} of ${where} is marked @revoked in known_hosts.`, {
      hint: "The key was revoked on purpose; ask the host's administrator.",
      data: { host: where, fingerprint },
    });
  }
  if (status.status === 'changed') {
    return rejected(
      `HOST KEY CHANGED for ${where}: the server presents ${keyType} key ${fingerprint}, but known_hosts has ${status.knownFingerprints.join(', ')} (${status.sources.join(', ')}). Someone may be intercepting the connection, or the host was re-installed.`,
      {
        hint: `A changed key is refused under every host_key_policy (insecure included). If the change is expected, remove the old key (ssh-keygen -R '${where}' -f ${facts.knownHostsFile}) and connect again. No credential was sent.`,
        data: {
          host: where,
          fingerprint,
          key_type: keyType,
          known_fingerprints: status.knownFingerprints,
          known_hosts: status.sources,
        },
      },
    );
  }
  // Unknown key.
  const data = { host: where, fingerprint, key_type: keyType };
  switch (policy) {
    case 'insecure':
      return {
        action: 'accept',
        note: `host_key_policy "insecure": accepted unknown ${keyType} key ${fingerprint} for ${where} WITHOUT verification; nothing was recorded.`,
      };
    case 'accept-new':
      return { action: 'record', notePrefix: 'host_key_policy "accept-new": ' };
    case 'strict':
      return rejected(
        `Unknown host key for ${where}: ${keyType} ${fingerprint} is not in known_hosts and host_key_policy is "strict".`,
        {
          hint: `Verify the fingerprint with the host's administrator, then add the key to ${facts.knownHostsFile} (e.g. ssh-keyscan -p ${facts.port} ${facts.hostName}) or connect once with host_key_policy "accept-new".`,
          data,
        },
      );
    case 'ask':
      if (!facts.canAsk) {
        return rejected(
          `Unknown host key for ${where}: ${keyType} ${fingerprint}. conch could not ask a person to confirm it.`,
          {
            hint: `Verify the fingerprint, then connect with host_key_policy "accept-new" (records it) or add it to ${facts.knownHostsFile}.`,
            data,
          },
        );
      }
      return {
        action: 'ask',
        question: { host: facts.host, port: facts.port, fingerprint, keyType, jumpHost: facts.jumpHost },
      };
  }
}

/** Decides about an unknown key once the person asked has answered (or asking failed). */
export function decideAfterAsking(facts: HostKeyFacts, answer: HostKeyAnswer): SettledHostKeyDecision {
  const fingerprint = fingerprintOf(facts.key);
  const keyType = keyTypeOf(facts.key);
  const where = knownHostsName(facts.host, facts.port);
  const data = { host: where, fingerprint, key_type: keyType };
  if ('failed' in answer) {
    return rejected(
      `Unknown host key for ${where}: ${keyType} ${fingerprint}; asking for confirmation failed: ${answer.failed.message}.`,
      {
        hint: `Connect with host_key_policy "accept-new" or add the key to ${facts.knownHostsFile}.`,
        data,
      },
    );
  }
  if (!answer.confirmed) {
    return rejected(`The host key ${keyType} ${fingerprint} of ${where} was not accepted.`, { data });
  }
  return { action: 'record', notePrefix: 'host key confirmed by the user: ' };
}

/** The note on recording a new key in known_hosts (`failure` when writing the file failed). */
export function recordedKeyNote(facts: HostKeyFacts, failure?: Error): string {
  const what = `${keyTypeOf(facts.key)} key ${fingerprintOf(facts.key)} for ${knownHostsName(facts.host, facts.port)}`;
  return failure === undefined
    ? `recorded new ${what} in ${facts.knownHostsFile}.`
    : `accepted new ${what}, but could not record it in ${facts.knownHostsFile}: ${failure.message}.`;
}

function rejected(
  message: string,
  details: { hint?: string; data: Record<string, unknown> },
): SettledHostKeyDecision {
  return { action: 'reject', error: new ConchError(ErrorCode.SSH_HOST_KEY_REJECTED, message, details) };
}
