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

describe('SecretRedactor with invisible bytes inside the secret', () => {
  const cases: Array<[string, string]> = [
    ['grep --color highlighting a part', 'pw: hun\u001b[01;31m\u001b[Kter2se\u001b[m\u001b[Kcret!'],
    ['bold inside', 'pw: hunter\u001b[1m2secret\u001b[0m!'],
    ['an overstruck character', 'pw: hunQ\bter2secret!'],
    ['man-page bold', 'pw: h\bhunter2secret!'],
    ['an OSC title inside', 'pw: hunter2\u001b]0;title\u0007secret!'],
  ];
  for (const [what, text] of cases) {
    it(`masks it with ${what}, split at every position`, () => {
      for (let i = 0; i <= text.length; i++) {
        const r = new SecretRedactor();
        r.add('hunter2secret');
        const out = dec(r.push(enc(text.slice(0, i)))) + dec(r.push(enc(text.slice(i)))) + dec(r.flush());
        expect(out, `split at ${i}`).not.toContain('2secret');
        expect(out, `split at ${i}`).not.toContain('hunter');
        expect(out.startsWith('pw: ')).toBe(true);
        expect(out.endsWith('!') || out.endsWith('\u001b[0m!')).toBe(true);
        expect(out).toContain('[secret]');
      }
    });
  }

  it('leaves text that only looks similar alone', () => {
    const r = new SecretRedactor();
    r.add('hunter2secret');
    const text = 'hunter2\u001b[1mSECRET hunter3secret';
    expect(dec(r.push(enc(text))) + dec(r.flush())).toBe(text);
  });
});
