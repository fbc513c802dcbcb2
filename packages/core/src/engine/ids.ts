/** Random source: fills and returns `n` random bytes. Injected so tests can be deterministic. */
export type RandomBytes = (n: number) => Uint8Array;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Bytes drawn from the CSPRNG at a time by {@link cryptoRandomBytes}. */
const POOL_BYTES = 4096;
let pool: Uint8Array = new Uint8Array(0);
let poolAt = 0;

function fillRandom<T extends Uint8Array>(bytes: T): T {
  (
    globalThis as unknown as { crypto: { getRandomValues(a: Uint8Array): Uint8Array } }
  ).crypto.getRandomValues(bytes);
  return bytes;
}

/**
 * The platform's CSPRNG (`globalThis.crypto.getRandomValues`, present in Node 20 and browsers), drawn
 * 4 KiB at a time: every call gets bytes no other call gets, and an id costs a copy, not a call into the
 * CSPRNG (two ids per command).
 */
export const cryptoRandomBytes: RandomBytes = (n) => {
  if (n > POOL_BYTES) return fillRandom(new Uint8Array(n));
  if (poolAt + n > pool.length) {
    pool = fillRandom(new Uint8Array(POOL_BYTES));
    poolAt = 0;
  }
  const bytes = pool.slice(poolAt, poolAt + n);
  poolAt += n;
  return bytes;
};

/** `length` unguessable base32 characters. */
export function randomBase32(random: RandomBytes, length: number): string {
  const bytes = random(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32[(bytes[i] ?? 0) & 31];
  return out;
}

/** A session id: `s_` + 8 base32 characters (docs/sessions.md). */
export function newSessionId(random: RandomBytes): string {
  return `s_${randomBase32(random, 8)}`;
}

/** A command id: `c_` + 10 base32 characters (docs/sessions.md). */
export function newCommandId(random: RandomBytes): string {
  return `c_${randomBase32(random, 10)}`;
}

/** A marker nonce: 24 alphanumeric characters. */
export function newNonce(random: RandomBytes): string {
  return randomBase32(random, 24);
}
