import { type ArithmeticWord, type HereDocBody, parse, type WordPart } from 'unbash';

/**
 * Bash's arithmetic contexts read text in which quotes do not hide expansions: bash expands a subscript,
 * an offset or an arithmetic expression like a double-quoted string in which quotes are ordinary
 * characters, and it expands again the subscripts of the variables it evaluates. These helpers find the
 * text bash evaluates there and parse it the way bash expands it, so that the substitutions in it are
 * checked as commands (docs/policy.md, "Arithmetic contexts").
 */

/** `[[ ]]` operators whose operands bash evaluates arithmetically (and so their array subscripts). */
export const ARITHMETIC_TEST_OPERATORS: ReadonlySet<string> = new Set([
  '-eq',
  '-ne',
  '-lt',
  '-le',
  '-gt',
  '-ge',
  '-v',
]);

/**
 * The text bash evaluates for a word of `(( ))`, `$(( ))` or `for (( ))`: its quotes removed (a word
 * without parts is its text as written). Undefined when part of it is only known at run time.
 */
export function arithmeticWordValue(word: ArithmeticWord): string | undefined {
  if (word.parts === undefined) return word.value;
  let value = '';
  for (const part of word.parts) {
    const text = staticPartValue(part);
    if (text === undefined) return undefined;
    value += text;
  }
  return value;
}

function staticPartValue(part: WordPart): string | undefined {
  switch (part.type) {
    case 'Literal':
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return part.value;
    case 'DoubleQuoted':
    case 'LocaleString':
      return part.parts.every((p) => p.type === 'Literal')
        ? part.parts.map((p) => p.value).join('')
        : undefined;
    default:
      return undefined;
  }
}

/**
 * The subscript of an array-literal element written `[SUBSCRIPT]=value` (after quote removal), which bash
 * evaluates arithmetically for an indexed array; undefined for any other element.
 */
export function elementSubscript(element: string): string | undefined {
  if (!element.startsWith('[')) return undefined;
  let depth = 0;
  for (let i = 0; i < element.length; i++) {
    const c = element[i];
    if (c === '[') depth++;
    else if (c === ']' && --depth === 0) {
      const rest = element.slice(i + 1);
      return rest.startsWith('=') || rest.startsWith('+=') ? element.slice(1, i) : undefined;
    }
  }
  return undefined;
}

/** Text parsed the way bash expands arithmetic text. */
export interface ExpandedText {
  /** The script parsed: positions in `body` index it. */
  readonly source: string;
  /** The text's parts: literal text (escapes resolved) and the expansions found in it. */
  readonly body: HereDocBody | undefined;
  /** False when the text does not parse as expandable text (an unterminated substitution …). */
  readonly complete: boolean;
}

/**
 * Parses `text` as bash expands arithmetic text: like the body of an unquoted here-document, where `$( )`,
 * backticks, `${ }` and `$(( ))` are expanded, quotes are ordinary characters and a backslash escapes only
 * `$`, a backtick, a backslash and a newline.
 */
export function parseExpandedText(text: string): ExpandedText {
  let delimiter = 'CONCH_ARITHMETIC_TEXT';
  while (text.includes(delimiter)) delimiter += '_';
  const source = `: <<${delimiter}\n${text}\n${delimiter}\n`;
  const script = parse(source);
  const command = script.commands[0]?.command;
  const doc = command?.type === 'Command' ? command.redirects[0] : undefined;
  if (doc?.type !== 'HereDoc') return { source, body: undefined, complete: false };
  const complete =
    (script.errors === undefined || script.errors.length === 0) &&
    script.commands.length === 1 &&
    doc.closing !== undefined;
  return { source, body: doc.body, complete };
}
