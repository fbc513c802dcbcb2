/**
 * Checks of the raw input text that a parse does not show: how deep brackets nest, a trailing line
 * continuation, and `!` history expansion (which an interactive bash applies before parsing).
 */

/** Deepest nesting of brackets, braces and parentheses (`$(`, `((`, `{`, `[`) the policy parses. */
export const MAX_NESTING = 100;

/** How deep brackets nest in the raw text (quotes are not skipped, so this over-counts, failing closed). */
export function nestingDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  for (const ch of source) {
    if (ch === '(' || ch === '{' || ch === '[') deepest = Math.max(deepest, ++depth);
    else if ((ch === ')' || ch === '}' || ch === ']') && depth > 0) depth--;
  }
  return deepest;
}

/** True when the text ends with a backslash-newline (or a backslash) that continues the line. */
export function endsWithContinuation(source: string): boolean {
  const s = source.endsWith('\n') ? source.slice(0, -1) : source;
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/**
 * The offset of the first `!` that an interactive bash would history-expand (outside single quotes,
 * not followed by a blank, `=`, `(` or the end), or -1.
 */
export function findHistoryExpansion(source: string): number {
  let single = false;
  let double = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (single) {
      if (c === "'") single = false;
      continue;
    }
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === "'" && !double) {
      single = true;
      continue;
    }
    if (c === '"') {
      double = !double;
      continue;
    }
    if (c === '!') {
      const next = source[i + 1];
      if (
        next === undefined ||
        next === ' ' ||
        next === '\t' ||
        next === '\n' ||
        next === '=' ||
        next === '('
      )
        continue;
      if (double && next === '"') continue;
      return i;
    }
  }
  return -1;
}
