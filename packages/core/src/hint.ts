/**
 * Face-neutral hints. Core and the drivers never name a face's commands (an MCP tool, a CLI
 * sub-command): a hint that points at another operation refers to it by its {@link Verb}, and each
 * face words the verbs with its own {@link Vocabulary} (the MCP face says `kill_process`, the CLI
 * `conch kill`).
 */

/** The operations a hint can point at (the verbs of the conch service). */
export const VERBS = [
  'createLocal',
  'connectSsh',
  'createContainer',
  'listSessions',
  'closeSession',
  'execute',
  'readOutput',
  'respond',
  'sendControl',
  'listProcesses',
  'killProcess',
  'checkCommand',
] as const;

/** One of {@link VERBS}. */
export type Verb = (typeof VERBS)[number];

/** A reference to an operation inside a hint. */
export interface VerbRef {
  readonly verb: Verb;
}

/** A piece of a hint: literal text or a reference to an operation. */
export type HintPart = string | VerbRef;

/** A hint in face-neutral form: text with references to operations. */
export type Hint = readonly HintPart[];

/** How a face names each operation. */
export type Vocabulary = Readonly<Record<Verb, string>>;

/** The words used when no face words a hint: the verbs themselves. */
export const NEUTRAL_VOCABULARY: Vocabulary = Object.freeze(
  Object.fromEntries(VERBS.map((verb) => [verb, verb])) as Record<Verb, string>,
);

/** A reference to `verb`, for use inside {@link hint}. */
export function verb(name: Verb): VerbRef {
  return { verb: name };
}

/**
 * Builds a {@link Hint} from a template: interpolated {@link verb} references stay references, any
 * other interpolated value becomes text. Example: ``hint`Free one with ${verb('killProcess')}.` ``
 */
export function hint(strings: TemplateStringsArray, ...values: readonly (VerbRef | string | number)[]): Hint {
  const parts: HintPart[] = [];
  const pushText = (text: string) => {
    if (text === '') return;
    const last = parts[parts.length - 1];
    if (typeof last === 'string') parts[parts.length - 1] = last + text;
    else parts.push(text);
  };
  strings.forEach((text, i) => {
    pushText(text);
    if (i < values.length) {
      const value = values[i];
      if (typeof value === 'object' && value !== null) parts.push(value);
      else pushText(String(value));
    }
  });
  return parts;
}

/** Words a hint with a face's vocabulary. */
export function wordHint(parts: Hint, vocabulary: Vocabulary): string {
  return parts.map((part) => (typeof part === 'string' ? part : vocabulary[part.verb])).join('');
}
