/**
 * The one definition of "compile a pattern a user gave" (`until`, `filter`): RE2 syntax on a
 * linear-time engine (`re2js`), so no pattern can make a match take exponential time and freeze the
 * server. `^` and `$` match at line boundaries.
 */

import { RE2JS } from 're2js';
import { ConchError, ErrorCode } from '../errors.js';
import { USER_PATTERN_MAX_CHARS, USER_PATTERN_SYNTAX } from './user-pattern-limits.js';

export { USER_PATTERN_MAX_CHARS, USER_PATTERN_SYNTAX };

/** A compiled user pattern: whether it matches somewhere in a text. */
export interface TextPattern {
  /** The pattern as the user wrote it. */
  readonly source: string;
  /** True when the pattern matches anywhere in `text`. Time is linear in the text's length. */
  test(text: string): boolean;
}

/**
 * Compiles `source`, the value of the argument `name`, for a linear-time match.
 * @throws ConchError INVALID_ARGUMENT naming the pattern when it is not a string, too long, or not valid RE2.
 */
export function compileUserPattern(name: string, source: unknown): TextPattern {
  if (typeof source !== 'string' || source.length > USER_PATTERN_MAX_CHARS) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Invalid ${name}: a pattern of at most ${USER_PATTERN_MAX_CHARS} characters is expected, got ${describe(source)}.`,
      { hint: `${name} uses ${USER_PATTERN_SYNTAX}, e.g. "ready|listening on".` },
    );
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source, RE2JS.MULTILINE);
  } catch (error) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Invalid ${name} pattern ${JSON.stringify(source)}: ${(error as Error).message}.`,
      { hint: `${name} uses ${USER_PATTERN_SYNTAX}, e.g. "ready|listening on".` },
    );
  }
  return { source, test: (text) => compiled.test(text) };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `${value.length} characters`;
  return value === null ? 'null' : typeof value;
}
