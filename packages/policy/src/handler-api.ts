import type { Redirection } from 'unbash';
import type { Finding, Issue } from './finding.js';
import type { OptionScan } from './option-scan.js';
import type { Stdin } from './stdin.js';
import type { Arg } from './words.js';

/**
 * What a program handler is given (docs/policy.md, "How a command is checked"): the invocation it checks,
 * and the walk, which follows whatever the program runs. Handlers live in a table beside the program lists
 * (`program-handlers.ts`); the walk is `analyse.ts`.
 */

/** The script being walked and what surrounds it. */
export interface Scope {
  /** The text that positions of its syntax nodes index. */
  readonly source: string;
  /** How deep strings run as commands are nested here (0 for the input). */
  readonly depth: number;
  /** What a command here reads as its input, before its own redirections. */
  readonly stdin: Stdin;
  /** The finding that runs this script (a shell, `eval`, a wrapper …), if any. */
  readonly parent: Finding | undefined;
  /** How that finding runs it, for explanations. */
  readonly via: string | undefined;
}

/** Where an invocation was met, and how: what its finding records besides its words. */
export interface InvocationSite {
  /** Its text as written. */
  readonly text: string;
  /** The redirections of the simple command it belongs to. */
  readonly redirects: readonly Redirection[];
  /** The script it was met in. */
  readonly scope: Scope;
  /** The finding that runs it, if any. */
  readonly parent: Finding | undefined;
  /** When its words are a suffix of the parent's: the index of its name there. */
  readonly offsetInParent: number | undefined;
  /** How the parent runs it, for explanations. */
  readonly via: string | undefined;
  /** More arguments will be appended at run time. */
  readonly openEnded: boolean;
  /** Issues already found (in its assignments). */
  readonly issues: Issue[];
}

/** One program invocation, as a handler checks it. */
export interface Invocation {
  /** The finding recorded for it: the handler adds issues and marks it transparent. */
  readonly finding: Finding;
  /** Its words, `args[0]` being the name as written. */
  readonly args: readonly Arg[];
  /** The redirections of the simple command it belongs to. */
  readonly redirects: readonly Redirection[];
  /** The script it was met in. */
  readonly scope: Scope;
}

/** How an invocation runs another: what its finding records. */
export interface InnerCommand {
  /** The index in the invocation's words where the inner command starts, when it is a suffix of them. */
  readonly offsetInParent: number | undefined;
  /** How it is run, for explanations (`xargs`, `find -exec`). */
  readonly via: string;
  /** More arguments will be appended at run time. */
  readonly openEnded: boolean;
}

/** The services of the walk that handlers use to follow what a program runs. */
export interface Walk {
  /** Records `args` as a command run by `invocation` and follows whatever it runs. */
  invokeInner(invocation: Invocation, args: readonly Arg[], how: InnerCommand): Finding;
  /**
   * The wrapper `invocation` runs `command` (a suffix of its words starting at `offset`, or a new argv):
   * the wrapper needs no allow rule of its own, the command is checked as the wrapper's inner command.
   */
  runCommand(
    invocation: Invocation,
    command: readonly Arg[],
    offset: number | undefined,
    openEnded?: boolean,
  ): void;
  /** The wrapper's command starts after its options (`scan.index` in `args`); a dynamic word hides it. */
  runAfterOptions(invocation: Invocation, args: readonly Arg[], scan: OptionScan, openEnded?: boolean): void;
  /** `source` is run as commands by `invocation` (`eval`, `trap`, a Tcl `spawn` …). */
  runScript(source: string, invocation: Invocation, via: string): void;
  /** Words joined with spaces and run by a shell (`bash -c`, `ssh host cmd`, `watch cmd`, `su -c`). */
  runShellString(invocation: Invocation, words: readonly Arg[], what: string): void;
  /** A shell reading its commands from its input: literal text is checked, a terminal is interactive. */
  runShellInput(invocation: Invocation, what: string): void;
  /** Literal text a shell reads as its script (and every suffix of it, since its commands can read part). */
  runFedScript(text: string, invocation: Invocation, what: string): void;
  /** Runs `check` with its findings marked speculative (they only ever add denials). */
  speculatively(check: () => void): void;
}

/** Checks one program's invocation and follows what it runs. */
export type ProgramHandler = (invocation: Invocation, walk: Walk) => void;
