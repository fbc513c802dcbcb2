import { ConchError, ErrorCode } from '@conch/core';
import { describe, expect, it } from 'vitest';
import {
  decideAfterAsking,
  decideHostKey,
  type HostKeyDecision,
  type HostKeyFacts,
  recordedKeyNote,
} from './host-key-decision.js';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from './host-key-policies.js';
import { fingerprintOf, parseKnownHosts } from './known-hosts.js';

/** An SSH wire string: a 4-byte length, then the bytes. */
const sshString = (text: string) => {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
};
/** A well-formed public key blob: its type, then some key material. */
const keyBlob = (type: string, material: string) => Buffer.concat([sshString(type), sshString(material)]);

const offered = keyBlob('ssh-ed25519', 'offered');
const other = keyBlob('ssh-ed25519', 'other');
const otherRsa = keyBlob('ssh-rsa', 'other-rsa');
const FILE = '/home/u/.ssh/known_hosts';

/** known_hosts text → entries, as the handshake reads them. */
const knownHosts = (...lines: string[]) => parseKnownHosts(lines.join('\n'), 'known_hosts');
const entry = (hosts: string, key: Buffer, marker = '') =>
  `${marker}${hosts} ${key.subarray(4, 4 + key.readUInt32BE(0)).toString()} ${key.toString('base64')}`;

const facts = (over: Partial<HostKeyFacts> = {}): HostKeyFacts => ({
  key: offered,
  host: 'build.example',
  hostName: '192.0.2.7',
  port: 22,
  jumpHost: false,
  knownHosts: [],
  knownHostsFile: FILE,
  policy: 'ask',
  canAsk: true,
  ...over,
});

/** The error of a rejection (fails the test otherwise). */
function rejection(decision: HostKeyDecision): ConchError {
  if (decision.action !== 'reject') throw new Error(`expected a rejection, got ${decision.action}`);
  expect(decision.error).toBeInstanceOf(ConchError);
  expect(decision.error.code).toBe(ErrorCode.SSH_HOST_KEY_REJECTED);
  return decision.error;
}

const KNOWN = knownHosts(entry('build.example', offered));
const CHANGED = knownHosts(entry('build.example', other), entry('other.example', offered));
const REVOKED = knownHosts(entry('build.example', offered), entry('*', offered, '@revoked '));

describe('decideHostKey: every policy × known, unknown, changed, revoked key × whether someone can be asked', () => {
  const expected: Record<HostKeyPolicy, Record<'known' | 'unknown' | 'changed' | 'revoked', string>> = {
    ask: { known: 'accept', unknown: 'ask', changed: 'reject', revoked: 'reject' },
    'accept-new': { known: 'accept', unknown: 'record', changed: 'reject', revoked: 'reject' },
    strict: { known: 'accept', unknown: 'reject', changed: 'reject', revoked: 'reject' },
    insecure: { known: 'accept', unknown: 'accept', changed: 'reject', revoked: 'reject' },
  };
  const situations = { known: KNOWN, unknown: [], changed: CHANGED, revoked: REVOKED } as const;
  const cases = HOST_KEY_POLICIES.flatMap((policy) =>
    Object.entries(situations).flatMap(([situation, entries]) =>
      [true, false].map((canAsk) => ({
        policy,
        situation: situation as keyof typeof situations,
        entries,
        canAsk,
      })),
    ),
  );

  it.each(cases)('$policy, $situation key, canAsk $canAsk', ({ policy, situation, entries, canAsk }) => {
    const decision = decideHostKey(facts({ policy, knownHosts: entries, canAsk }));
    // Nobody to ask turns "ask" into a refusal; nothing else depends on it.
    const action = expected[policy][situation] === 'ask' && !canAsk ? 'reject' : expected[policy][situation];
    expect(decision.action).toBe(action);
  });

  it('a known key is accepted with nothing to note', () => {
    for (const policy of HOST_KEY_POLICIES) {
      expect(decideHostKey(facts({ policy, knownHosts: KNOWN }))).toEqual({ action: 'accept' });
    }
  });

  it('a changed key is refused under every policy, naming the known keys, where they are, and the fix', () => {
    for (const policy of HOST_KEY_POLICIES) {
      const error = rejection(decideHostKey(facts({ policy, knownHosts: CHANGED })));
      expect(error.message).toBe(
        `HOST KEY CHANGED for build.example: the server presents ssh-ed25519 key ${fingerprintOf(offered)}, but known_hosts has ${fingerprintOf(other)} (known_hosts:1). Someone may be intercepting the connection, or the host was re-installed.`,
      );
      expect(error.hint).toContain(`ssh-keygen -R 'build.example' -f ${FILE}`);
      expect(error.hint).toContain('No credential was sent');
      expect(error.data).toEqual({
        host: 'build.example',
        fingerprint: fingerprintOf(offered),
        key_type: 'ssh-ed25519',
        known_fingerprints: [fingerprintOf(other)],
        known_hosts: ['known_hosts:1'],
      });
    }
  });

  it('a key of another type than the one known counts as changed', () => {
    const error = rejection(
      decideHostKey(facts({ policy: 'insecure', knownHosts: knownHosts(entry('build.example', otherRsa)) })),
    );
    expect(error.message).toContain(`known_hosts has ${fingerprintOf(otherRsa)}`);
  });

  it('a revoked key is refused under every policy, even where it is also listed as known', () => {
    for (const policy of HOST_KEY_POLICIES) {
      const error = rejection(decideHostKey(facts({ policy, knownHosts: REVOKED })));
      expect(error.message).toBe(
        `The host key ${fingerprintOf(offered)} of build.example is marked @revoked in known_hosts.`,
      );
      expect(error.data).toEqual({ host: 'build.example', fingerprint: fingerprintOf(offered) });
    }
  });
});

describe('decideHostKey: an unknown key', () => {
  it('ask: asks about the host, port, fingerprint and type, and whether it is a jump host', () => {
    expect(decideHostKey(facts({ port: 2222, jumpHost: true }))).toEqual({
      action: 'ask',
      question: {
        host: 'build.example',
        port: 2222,
        fingerprint: fingerprintOf(offered),
        keyType: 'ssh-ed25519',
        jumpHost: true,
      },
    });
  });

  it('ask with nobody to ask: refused, saying so and how to trust the key', () => {
    const error = rejection(decideHostKey(facts({ canAsk: false })));
    expect(error.message).toBe(
      `Unknown host key for build.example: ssh-ed25519 ${fingerprintOf(offered)}. conch could not ask a person to confirm it.`,
    );
    expect(error.hint).toBe(
      `Verify the fingerprint, then connect with host_key_policy "accept-new" (records it) or add it to ${FILE}.`,
    );
    expect(error.data).toEqual({
      host: 'build.example',
      fingerprint: fingerprintOf(offered),
      key_type: 'ssh-ed25519',
    });
  });

  it('accept-new: recorded, and the note says where', () => {
    const decision = decideHostKey(facts({ policy: 'accept-new' }));
    expect(decision).toEqual({ action: 'record', notePrefix: 'host_key_policy "accept-new": ' });
    expect(recordedKeyNote(facts())).toBe(
      `recorded new ssh-ed25519 key ${fingerprintOf(offered)} for build.example in ${FILE}.`,
    );
  });

  it('strict: refused, with how to add the key (ssh-keyscan of the address and port)', () => {
    const error = rejection(decideHostKey(facts({ policy: 'strict', port: 2222 })));
    expect(error.message).toBe(
      `Unknown host key for [build.example]:2222: ssh-ed25519 ${fingerprintOf(offered)} is not in known_hosts and host_key_policy is "strict".`,
    );
    expect(error.hint).toContain(`add the key to ${FILE} (e.g. ssh-keyscan -p 2222 192.0.2.7)`);
  });

  it('insecure: accepted without verification, nothing recorded, and the note says so', () => {
    expect(decideHostKey(facts({ policy: 'insecure', canAsk: false }))).toEqual({
      action: 'accept',
      note: `host_key_policy "insecure": accepted unknown ssh-ed25519 key ${fingerprintOf(offered)} for build.example WITHOUT verification; nothing was recorded.`,
    });
  });

  it('a key known only under another port is unknown on this one', () => {
    const entries = knownHosts(entry('build.example', offered));
    expect(decideHostKey(facts({ port: 2222, knownHosts: entries })).action).toBe('ask');
    expect(
      decideHostKey(facts({ port: 2222, knownHosts: knownHosts(entry('[build.example]:2222', offered)) }))
        .action,
    ).toBe('accept');
  });
});

describe('decideAfterAsking', () => {
  it('confirmed: recorded, noting that the user confirmed it', () => {
    expect(decideAfterAsking(facts(), { confirmed: true })).toEqual({
      action: 'record',
      notePrefix: 'host key confirmed by the user: ',
    });
  });

  it('refused: not accepted', () => {
    const error = rejection(decideAfterAsking(facts(), { confirmed: false }));
    expect(error.message).toBe(
      `The host key ssh-ed25519 ${fingerprintOf(offered)} of build.example was not accepted.`,
    );
    expect(error.hint).toBeUndefined();
  });

  it('asking failed: refused, naming why and the other ways to trust the key', () => {
    const error = rejection(decideAfterAsking(facts(), { failed: new Error('the client cannot elicit') }));
    expect(error.message).toBe(
      `Unknown host key for build.example: ssh-ed25519 ${fingerprintOf(offered)}; asking for confirmation failed: the client cannot elicit.`,
    );
    expect(error.hint).toBe(`Connect with host_key_policy "accept-new" or add the key to ${FILE}.`);
  });
});

describe('recordedKeyNote', () => {
  it('says when the key could not be written', () => {
    expect(recordedKeyNote(facts({ port: 2222 }), new Error('EACCES: permission denied'))).toBe(
      `accepted new ssh-ed25519 key ${fingerprintOf(offered)} for [build.example]:2222, but could not record it in ${FILE}: EACCES: permission denied.`,
    );
  });
});

describe('another connection to a host already verified (a pinned key)', () => {
  it('accepts exactly the pinned key, whatever known_hosts says', () => {
    expect(decideHostKey(facts({ pinnedKey: offered, knownHosts: CHANGED, policy: 'strict' }))).toEqual({
      action: 'accept',
    });
  });

  it('refuses any other key under every policy', () => {
    for (const policy of HOST_KEY_POLICIES) {
      const error = rejection(decideHostKey(facts({ pinnedKey: other, knownHosts: KNOWN, policy })));
      expect(error.message).toBe(
        `The host key of build.example changed while connected: it was ${fingerprintOf(other)}, now ${fingerprintOf(offered)}.`,
      );
      expect(error.data).toEqual({
        host: 'build.example',
        fingerprint: fingerprintOf(offered),
        known_fingerprints: [fingerprintOf(other)],
      });
    }
  });
});
