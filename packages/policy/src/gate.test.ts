import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_INPUT_BYTES, gateInput } from './gate.js';

describe('gateInput', () => {
  it('passes ordinary text with newlines and tabs', () => {
    expect(gateInput('ls -la\n\tgit status')).toBeUndefined();
  });

  it.each([
    ['NUL', 'ls\0rm x', 'NUL (U+0000)'],
    ['CR', 'ls\rrm x', 'carriage return (CR) (U+000D)'],
    ['Ctrl-U', 'ls\x15rm x', 'Ctrl-U (erase line) (U+0015)'],
    ['DEL', 'ls\x7f', 'DEL (U+007F)'],
    ['ESC', '\x1b[A', 'ESC (U+001B)'],
    ['C1', 'ls\u009b', 'a C1 control character (U+009B)'],
    ['other C0', 'ls\x01', 'Ctrl-A (U+0001)'],
  ])('refuses %s and says what and where', (_name, text, what) => {
    const r = gateInput(text);
    expect(r?.rule).toBe('policy:control-character');
    expect(r?.message).toContain(what);
    expect(r?.message).toMatch(/at offset \d+/);
  });

  it('refuses TAB only for typed input (readline completes words)', () => {
    expect(gateInput('ls\t-la')).toBeUndefined();
    expect(gateInput('ls\t-la', { typed: true })?.message).toContain('TAB');
  });

  it('caps the size in UTF-8 bytes', () => {
    expect(DEFAULT_MAX_INPUT_BYTES).toBe(65536);
    expect(gateInput('a'.repeat(65536))).toBeUndefined();
    expect(gateInput('a'.repeat(65537))?.rule).toBe('policy:too-long');
    expect(gateInput('é'.repeat(40000))?.rule).toBe('policy:too-long'); // 80000 bytes
    expect(gateInput('abc', { maxBytes: 2 })?.message).toContain('limit of 2 bytes');
  });

  it('lets non-control Unicode through', () => {
    expect(gateInput('echo "héllo wörld ✓ 日本"')).toBeUndefined();
  });
});
