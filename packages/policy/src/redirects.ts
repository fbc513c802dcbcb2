import type { Word } from 'unbash';
import type { Issue } from './finding.js';
import { wordToArg } from './words.js';

/** Redirection operators that open (and may create or truncate) the file they name. */
const FILE_WRITING_REDIRECTS: ReadonlySet<string> = new Set(['>', '>>', '>|', '&>', '&>>', '<>']);

/** Files output may be redirected to under an allow list without a rule allowing it. */
export const HARMLESS_REDIRECT_TARGETS: ReadonlySet<string> = new Set([
  '/dev/null',
  '/dev/stdout',
  '/dev/stderr',
]);

/** The rule that allows output redirection to files under an allow list: `--allow '>'`. */
export const REDIRECT_RULE = '>';

/**
 * An output redirection to a file writes a file no allowed program was asked to write: under an allow list
 * it is denied unless the rule {@link REDIRECT_RULE} is allowed. Targets that are fds or harmless devices pass.
 */
export function fileRedirectIssue(node: { operator: string; target: Word | undefined }): Issue | undefined {
  const target = node.target;
  if (target === undefined) return undefined;
  const arg = wordToArg(target);
  if (node.operator === '>&' || node.operator === '<&') {
    // `>&2`, `>&-`: a file descriptor; `>& file` (bash's `&>` spelling) opens a file.
    if (arg.isStatic && /^(\d+-?|-)$/.test(arg.value)) return undefined;
  } else if (!FILE_WRITING_REDIRECTS.has(node.operator)) {
    return undefined;
  }
  if (arg.isStatic && (HARMLESS_REDIRECT_TARGETS.has(arg.value) || /^\/dev\/fd\/\d+$/.test(arg.value)))
    return undefined;
  return {
    rule: 'policy:redirect-to-file',
    message: `"${target.text}" is a file that the output redirection would write, which no allowed program was asked to do (allow it with the rule "${REDIRECT_RULE}")`,
    allowListOnly: true,
    waiver: { program: REDIRECT_RULE, words: [] },
  };
}
