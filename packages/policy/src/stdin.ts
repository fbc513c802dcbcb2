import type { CommandNode, Redirection } from 'unbash';
import { echoOutput, printfOutput } from './literal.js';
import { normaliseName } from './names.js';
import { type Arg, assignmentToArg, hereDocText, wordToArg } from './words.js';

/** What a command reads as its standard input, as far as the policy can tell before it runs. */
export type Stdin =
  | { readonly kind: 'terminal' }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'pipe'; readonly from: CommandNode };

/** Input that is neither the terminal nor literal text. */
export const UNKNOWN_STDIN: Stdin = { kind: 'unknown' };
/** The terminal: what the input typed at the top level reads. */
export const TERMINAL_STDIN: Stdin = { kind: 'terminal' };

/** Paths through which a program reads its own standard input as a file. */
export const STDIN_PATHS: ReadonlySet<string> = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

/** True when the redirection replaces standard input (`<`, `<&`, `<>`, here-strings and here-documents). */
export function isStdinRedirect(redirect: Redirection): boolean {
  const descriptor = redirect.descriptor;
  const fd = descriptor?.type === 'FileDescriptor' ? descriptor.value : descriptor ? -1 : undefined;
  if (fd !== undefined) return fd === 0 || fd === -1;
  if (redirect.type === 'HereString' || redirect.type === 'HereDoc') return true;
  return redirect.operator === '<' || redirect.operator === '<&' || redirect.operator === '<>';
}

/** The stdin of a command with these redirections, given what it would read without them (the last redirection of fd 0 wins). */
export function stdinOf(redirects: readonly Redirection[], inherited: Stdin): Stdin {
  let stdin: Stdin = inherited;
  for (const redirect of redirects) {
    if (!isStdinRedirect(redirect)) continue;
    if (redirect.type === 'HereString') {
      const word = redirect.target;
      stdin =
        word !== undefined && wordToArg(word).isStatic
          ? { kind: 'literal', text: `${word.value}\n` }
          : UNKNOWN_STDIN;
    } else if (redirect.type === 'HereDoc') {
      const body = hereDocText(redirect);
      stdin = body === undefined ? UNKNOWN_STDIN : { kind: 'literal', text: body };
    } else if (redirect.operator === '<&' && redirect.target?.value === '-') {
      stdin = { kind: 'literal', text: '' };
    } else {
      stdin = UNKNOWN_STDIN;
    }
  }
  return stdin;
}

/** Turns a pipe from a literal `echo`/`printf`/`cat <<EOF` into its text; any other pipe is unknown. */
export function resolveStdin(stdin: Stdin): Stdin {
  if (stdin.kind !== 'pipe') return stdin;
  const from = stdin.from;
  if (from.type !== 'Command' || from.name === undefined) return UNKNOWN_STDIN;
  const nameArg = wordToArg(from.name);
  if (!nameArg.isStatic) return UNKNOWN_STDIN;
  const name = normaliseName(nameArg.value).name;
  const args: Arg[] = [];
  for (const word of from.suffix) {
    if (word.type === 'Word') args.push(wordToArg(word));
    else if (word.type === 'Assignment') args.push(assignmentToArg(word));
  }
  let text: string | undefined;
  if (name === 'echo') text = echoOutput(args);
  else if (name === 'printf') text = printfOutput(args);
  else if (name === 'cat' && args.length === 0) {
    const own = stdinOf(from.redirects, UNKNOWN_STDIN);
    if (own.kind === 'literal') text = own.text;
  }
  return text === undefined ? UNKNOWN_STDIN : { kind: 'literal', text };
}
