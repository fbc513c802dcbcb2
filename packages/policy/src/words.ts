import type { ArrayValue, Assignment, DoubleQuotedChild, HereDoc, Word, WordPart } from 'unbash';

/**
 * One word of a command as the policy sees it: `value` is what bash would pass to the program when the
 * word is static (quotes, backslashes, line continuations and `$'…'` resolved); a word with expansions,
 * globs or brace expansion is not static, and `value` is then its source text.
 */
export interface Arg {
  /** The word after quote removal when static; the source text otherwise. */
  readonly value: string;
  /** The word as written. */
  readonly text: string;
  /** True when the word's value is known without running anything. */
  readonly isStatic: boolean;
  /**
   * Set on a word that is not static when its quoted or escaped text holds substitution syntax, which bash
   * would run if it evaluated the word's value arithmetically (a static word's `value` shows it).
   */
  readonly hidesSubstitution?: true;
  /**
   * Set on a word that is not static but stays one word (its expansions are all double-quoted, so nothing
   * splits it): the value of its static beginning, up to the first expansion.
   */
  readonly staticPrefix?: string;
}

function isStaticPart(part: WordPart): boolean {
  switch (part.type) {
    case 'Literal':
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return true;
    case 'DoubleQuoted':
    case 'LocaleString':
      return part.parts.every((p) => p.type === 'Literal');
    default:
      return false;
  }
}

/** True when `word` has a value known before running anything (no expansion, glob or brace). */
export function isStaticWord(word: Word): boolean {
  const parts = word.parts;
  if (parts === undefined) return true;
  return parts.every(isStaticPart);
}

/** The policy's view of a word. */
export function wordToArg(word: Word): Arg {
  const isStatic = isStaticWord(word);
  if (isStatic) return { value: word.value, text: word.text, isStatic };
  const parts = word.parts ?? [];
  return {
    value: word.value,
    text: word.text,
    isStatic,
    ...(hidesSubstitution(parts) ? { hidesSubstitution: true } : {}),
    ...(parts.every(isQuotedOrStatic) ? { staticPrefix: staticPrefixOf(parts) } : {}),
  };
}

/** True for a part that cannot split its word: static text, or a double-quoted string. */
function isQuotedOrStatic(part: WordPart): boolean {
  return isStaticPart(part) || part.type === 'DoubleQuoted' || part.type === 'LocaleString';
}

/** The value of the static parts at the beginning of a word, up to its first expansion. */
function staticPrefixOf(parts: readonly (WordPart | DoubleQuotedChild)[]): string {
  let prefix = '';
  for (const part of parts) {
    if (part.type === 'DoubleQuoted' || part.type === 'LocaleString') {
      const inner = staticPrefixOf(part.parts);
      prefix += inner;
      if (!part.parts.every((p) => p.type === 'Literal')) return prefix;
    } else if (part.type === 'Literal' || part.type === 'SingleQuoted' || part.type === 'AnsiCQuoted') {
      prefix += part.value;
    } else {
      return prefix;
    }
  }
  return prefix;
}

/** The variable a word names (`x` for `x[1]`); for a word not static, only when `NAME[` is its static beginning. */
export function variableNameOf(a: Arg): string | undefined {
  if (a.isStatic) return a.value.replace(/\[.*$/s, '');
  return /^([A-Za-z_][A-Za-z0-9_]*)\[/.exec(a.staticPrefix ?? '')?.[1];
}

/** The policy's view of an assignment given as a command argument (`export A=1`, `declare a=(x)`). */
export function assignmentToArg(a: Assignment): Arg {
  const value = a.value;
  const isStatic =
    (a.index === undefined || isStaticWord(a.index)) &&
    (value.type === 'Word' ? isStaticWord(value) : arrayIsStatic(value));
  const rendered = value.type === 'Word' ? value.value : value.elements.map((e) => e.value).join(' ');
  if (isStatic) return { value: `${a.name}${a.append ? '+=' : '='}${rendered}`, text: a.text, isStatic };
  const hidden =
    hidesSubstitution(a.index?.parts) ||
    (value.type === 'Word'
      ? hidesSubstitution(value.parts)
      : value.elements.some((e) => hidesSubstitution(e.parts)));
  return hidden
    ? { value: a.text, text: a.text, isStatic, hidesSubstitution: true }
    : { value: a.text, text: a.text, isStatic };
}

function arrayIsStatic(value: ArrayValue): boolean {
  return value.elements.every(isStaticWord);
}

/** A static argument made by the policy itself (e.g. the implicit `echo` of `xargs`). */
export function syntheticArg(value: string, isStatic = true): Arg {
  return { value, text: value, isStatic };
}

/**
 * The text a here-document feeds to its command when it is known without running anything: a quoted
 * delimiter gives the body as written; an unquoted one gives it after backslash processing, unless the body
 * contains expansions. `undefined` when not static.
 */
export function hereDocText(doc: HereDoc): string | undefined {
  const body = doc.body;
  if (doc.delimiter?.quoted) return body.text;
  const parts = body.parts;
  if (parts === undefined) return unescapeHereDoc(body.text);
  if (parts.every((p) => p.type === 'Literal')) return parts.map((p) => p.value).join('');
  return undefined;
}

function unescapeHereDoc(text: string): string {
  return text.replace(/\\([$`\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** Matches the name part of `NAME=value`, `NAME+=value`, `NAME[i]=value`. */
const ASSIGNMENT_WORD = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;

/** The variable assigned by a word such as `PATH=/x` (as `export`, `declare` … receive it), if any. */
export function assignedName(value: string): string | undefined {
  return ASSIGNMENT_WORD.exec(value)?.[1];
}

/** Substitution syntax that bash runs when it expands text it evaluates arithmetically: `$(`, a backtick, `$[`. */
export const SUBSTITUTION_SYNTAX = /\$\(|`|\$\[/;

/**
 * True when a static string would run a command if bash ever evaluated it arithmetically: substitution
 * syntax inside brackets, as in `a[$(rm x)]` or `a[b[1]+$(rm x)]` (bash expands the subscripts of the
 * variables it evaluates in `$(( ))`, `(( ))`, `[[ -eq ]]`, `let`, `test -v` …).
 */
export function holdsSubscriptSubstitution(value: string): boolean {
  if (!value.includes('[')) return false;
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    else if (depth > 0 && (c === '`' || (c === '$' && (value[i + 1] === '(' || value[i + 1] === '[')))) {
      return true;
    }
  }
  return false;
}

/**
 * True when the quoted or escaped text of these word parts holds substitution syntax, looking into the
 * operands of `${…}` too. Bash runs such a substitution where it evaluates the text arithmetically, although
 * no parser sees a command there. (Subscripts and offsets of a nested `${…}` are arithmetic text of their
 * own, checked where they are met.)
 */
export function hidesSubstitution(parts: readonly WordPart[] | undefined): boolean {
  return parts?.some(partHidesSubstitution) === true;
}

function partHidesSubstitution(part: WordPart): boolean {
  switch (part.type) {
    case 'Literal':
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return SUBSTITUTION_SYNTAX.test(part.value);
    case 'DoubleQuoted':
    case 'LocaleString':
      return part.parts.some(partHidesSubstitution);
    case 'ParameterExpansion': {
      const op = part.operation;
      if (op === undefined) return false;
      switch (op.type) {
        case 'Default':
        case 'Remove':
        case 'Transform':
          return hidesSubstitution(op.operand.parts);
        case 'CaseModification':
          return hidesSubstitution(op.operand?.parts);
        case 'Replace':
          return hidesSubstitution(op.pattern.parts) || hidesSubstitution(op.replacement.parts);
        default:
          return false;
      }
    }
    case 'Glob':
    case 'ExtendedGlob':
    case 'BraceExpansion':
      return hidesSubstitution(part.parts);
    default:
      return false;
  }
}
