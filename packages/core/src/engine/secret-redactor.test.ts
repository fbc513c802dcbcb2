import { describe, expect, it } from 'vitest';
import { SecretRedactor } from './secret-redactor.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe('SecretRedactor', () => {
  it('passes data through untouched when idle', () => {
    const r = new SecretRedactor();
    const chunk = enc('hello');
    expect(r.push(chunk)).toBe(chunk);
  });

  it('masks a secret split across chunks at every position', () => {
    const text = 'before hunter2secret after';
    for (let i = 0; i <= text.length; i++) {
      const r = new SecretRedactor();
      r.add('hunter2secret\r');
      const out = dec(r.push(enc(text.slice(0, i)))) + dec(r.push(enc(text.slice(i)))) + dec(r.flush());
      expect(out).toBe('before [secret] after');
    }
  });

  it('holds back only what could start a secret', () => {
    const r = new SecretRedactor();
    r.add('abcdef');
    expect(dec(r.push(enc('xxabc')))).toBe('xx');
    expect(dec(r.push(enc('zz')))).toBe('abczz');
  });

  it('ignores secrets too short to mask safely and clears on demand', () => {
    const r = new SecretRedactor();
    r.add('ab');
    expect(r.idle).toBe(true);
    r.add('longer-secret');
    expect(dec(r.push(enc('longer-sec')))).toBe('');
    expect(dec(r.clear())).toBe('longer-sec');
    expect(r.idle).toBe(true);
  });
});
