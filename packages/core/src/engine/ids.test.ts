import { describe, expect, it } from 'vitest';
import { cryptoRandomBytes, newCommandId, newSessionId } from './ids.js';

describe('cryptoRandomBytes', () => {
  it('hands every call bytes of its own, across refills of its pool, in any size', () => {
    const seen = new Set<string>();
    // 24-byte draws over several 4 KiB pools: a repeat would mean bytes handed out twice.
    for (let i = 0; i < 1000; i++) {
      const bytes = cryptoRandomBytes(24);
      expect(bytes.length).toBe(24);
      seen.add(Buffer.from(bytes).toString('hex'));
    }
    expect(seen.size).toBe(1000);
    expect(cryptoRandomBytes(10_000).length).toBe(10_000);
    expect(cryptoRandomBytes(0).length).toBe(0);
  });

  it('makes ids of the documented shape', () => {
    expect(newCommandId(cryptoRandomBytes)).toMatch(/^c_[a-z2-7]{10}$/);
    expect(newSessionId(cryptoRandomBytes)).toMatch(/^s_[a-z2-7]{8}$/);
  });
});
