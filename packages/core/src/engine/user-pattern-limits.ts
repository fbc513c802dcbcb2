/**
 * The limits and the syntax description of user patterns (`until`, `filter`), apart from their compiler
 * (user-pattern.ts) so that what only states the rule (the parameter table, every command's options) does
 * not load the regex engine.
 */

/** Longest accepted pattern, in characters. */
export const USER_PATTERN_MAX_CHARS = 1000;

/** How the accepted syntax is described to users (tool descriptions, hints). */
export const USER_PATTERN_SYNTAX =
  'RE2 syntax (JavaScript-like regex without backreferences or lookaround; ^ and $ match at line ends)';
