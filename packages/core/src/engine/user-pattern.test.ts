import { describe, expect, it } from 'vitest';
import { ConchError, ErrorCode } from '../errors.js';
import { compileUserPattern } from './user-pattern.js';

function rejection(source: unknown): ConchError {
  try {
    compileUserPattern('filter', source);
  } catch (error) {
    return error as ConchError;
  }
  throw new Error(`${String(source)} was accepted`);
}

describe('compileUserPattern', () => {
  it('matches in linear time where a backtracking engine would run for hours', () => {
    // With JavaScript's RegExp this test takes 2^60 steps and never finishes.
    const pattern = compileUserPattern('filter', '^(a+)+$');
    expect(pattern.test(`${'a'.repeat(60)}b`)).toBe(false);
    expect(pattern.test(`${'a'.repeat(60)}b\n${'a'.repeat(60)}`)).toBe(true);
    expect(compileUserPattern('until', '(x+x+)+y').test('x'.repeat(5000))).toBe(false);
  });

  it('is multiline: ^ and $ match at line ends', () => {
    const pattern = compileUserPattern('until', '^ready$');
    expect(pattern.test('starting\nready\nmore')).toBe(true);
    expect(pattern.test('not ready yet')).toBe(false);
    expect(pattern.source).toBe('^ready$');
  });

  it('rejects bad syntax, backreferences and lookaround with INVALID_ARGUMENT naming the pattern', () => {
    for (const source of ['(', '(a)\\1', '(?=a)b', 'a{2,1}']) {
      const error = rejection(source);
      expect(error).toBeInstanceOf(ConchError);
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toContain(JSON.stringify(source));
      expect(error.hint).toContain('RE2');
    }
  });

  it('rejects a non-string and an over-long pattern', () => {
    expect(rejection(42).message).toContain('number');
    expect(rejection(null).message).toContain('null');
    expect(rejection('a'.repeat(1001)).message).toContain('1001 characters');
  });
});
