import type { Arg } from './words.js';

/**
 * Something found in a command that is denied whenever any rule exists, whatever the rules say.
 * `waiver` names the words an allow rule must contain to allow it explicitly (e.g. `git -c`).
 */
export interface Issue {
  /** The built-in rule, e.g. `policy:function-definition`, `policy:git -c`. */
  readonly rule: string;
  /** Why, in words an agent can act on. */
  readonly message: string;
  /** Present when an allow rule for `program` that contains all of `words` allows it explicitly. */
  readonly waiver?: { readonly program: string; readonly words: readonly string[] };
  /** Denied only when the policy has an allow list. */
  readonly allowListOnly?: boolean;
  /**
   * Denied only when a command found inside this construct (a finding whose `parent` chain leads to it) is
   * denied: it then says why that hidden command counts (quoted text that bash evaluates arithmetically).
   */
  readonly onlyWhenInnerDenied?: boolean;
}

/**
 * One simple command (or construct) found in the input, with its normalised argv. Wrappers produce one
 * finding for the wrapper and one for the command it runs (whose `parent` is the wrapper's).
 */
export interface Finding {
  /** The source text of the command as written. */
  readonly text: string;
  /** The words, `args[0]` being the name as written. */
  readonly args: readonly Arg[];
  /** The normalised program name for deny rules: quotes removed, path stripped. */
  name: string;
  /** The normalised name for allow rules: path stripped only for system directories (`./rm` stays). */
  allowName: string;
  /** False for assignment-only and redirection-only commands and constructs: no program runs. */
  readonly runsProgram: boolean;
  /** A wrapper or shell whose real work is another finding: needs no allow rule of its own. */
  transparent: boolean;
  /** More arguments will be appended at run time (`xargs`, `find -exec … +`). */
  readonly openEnded: boolean;
  /** The finding that runs this one (wrapper, shell, `find -exec`, `eval`, …), if any. */
  readonly parent: Finding | undefined;
  /** When this finding's argv is a suffix of `parent`'s: the index of this finding's name there. */
  readonly offsetInParent: number | undefined;
  /** How this finding is run by its parent, for explanations ("run by sudo", "in a bash -c string"). */
  readonly via: string | undefined;
  /** Built-in problems (denied under any rule unless waived). */
  readonly issues: Issue[];
  /**
   * Found in a suffix of literal text fed to a shell: the shell runs it only if a command of that script
   * reads part of the script from their shared input. Listed in a decision only when denied.
   */
  readonly speculative: boolean;
}
