import type { ArrayValue, Assignment, HereDoc, Word, WordPart } from 'unbash';

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
  return { value: word.value, text: word.text, isStatic: isStaticWord(word) };
}

/** The policy's view of an assignment given as a command argument (`export A=1`, `declare a=(x)`). */
export function assignmentToArg(a: Assignment): Arg {
  const value = a.value;
  const isStatic =
    (a.index === undefined || isStaticWord(a.index)) &&
    (value.type === 'Word' ? isStaticWord(value) : arrayIsStatic(value));
  const rendered = value.type === 'Word' ? value.value : value.elements.map((e) => e.value).join(' ');
  return {
    value: isStatic ? `${a.name}${a.append ? '+=' : '='}${rendered}` : a.text,
    text: a.text,
    isStatic,
  };
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

/**
 * True when a static string would run a command if bash ever evaluated it arithmetically: an array
 * subscript containing a command substitution, such as `a[$(rm x)]` (bash evaluates subscripts of
 * variables used in `$(( ))`, `(( ))`, `[[ -eq ]]`, `test -v` …).
 */
export function looksLikeArithmeticInjection(value: string): boolean {
  return /\[[^\]]*(\$\(|`)/.test(value);
}

/** Substitution syntax that arithmetic evaluation of an array subscript would run: `$(`, a backtick, `$[`. */
const SUBSTITUTION_SYNTAX = /\$\(|`|\$\[/;

/**
 * True when the literal (quoted or escaped) text of a word holds substitution syntax. In an arithmetic
 * context bash evaluates array subscripts in that text, running the substitution, although no parser sees a
 * command there. Substitutions that the shell itself expands are parsed and checked as commands instead.
 */
export function holdsLiteralSubstitution(word: {
  readonly value: string;
  readonly parts?: readonly WordPart[] | undefined;
}): boolean {
  if (word.parts === undefined) return SUBSTITUTION_SYNTAX.test(word.value);
  return word.parts.some(partHoldsSubstitution);
}

function partHoldsSubstitution(part: WordPart): boolean {
  switch (part.type) {
    case 'Literal':
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return SUBSTITUTION_SYNTAX.test(part.value);
    case 'DoubleQuoted':
    case 'LocaleString':
      return part.parts.some(partHoldsSubstitution);
    default:
      return false;
  }
}
