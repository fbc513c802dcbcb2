import { ConchError, ErrorCode } from '@conch/core';
import { parse } from 'unbash';
import type { Finding } from './finding.js';
import { normaliseName } from './names.js';
import { REDIRECT_RULE } from './redirects.js';
import { wordToArg } from './words.js';

/**
 * A policy rule: a command prefix such as `"git push"` (whole words of the normalised argv; `"*"` means
 * every command), or the same with examples that are checked when the configuration loads.
 */
export type Rule = string | RuleWithExamples;

/** A rule with examples (Codex style): `match` must be matched by the rule, `not_match` must not. */
export interface RuleWithExamples {
  /** The command prefix, e.g. `"git push"`. */
  readonly prefix: string;
  /** Commands the rule must match (an allow rule alone must allow them; a deny rule must deny them). */
  readonly match?: readonly string[] | undefined;
  /** Commands the rule must not match. */
  readonly not_match?: readonly string[] | undefined;
}

/** A rule parsed once: its normalised words. */
export interface CompiledRule {
  /** Which list the rule is in. */
  readonly kind: 'allow' | 'deny';
  /** The prefix as configured. */
  readonly prefix: string;
  /** The normalised words; `words[0]` is the program (path stripped for system directories). */
  readonly words: readonly string[];
  /** True for `"*"`: every command with a static name. */
  readonly all: boolean;
  /** How decisions name it: `"deny rm"`, `"allow git push"`. */
  readonly label: string;
  /** Examples that must match. */
  readonly match: readonly string[];
  /** Examples that must not match. */
  readonly notMatch: readonly string[];
}

/**
 * Parses a rule's prefix into normalised words. Throws a `ConchError` (`INVALID_ARGUMENT`) naming the rule
 * when it is not a plain command prefix.
 */
export function compileRule(rule: Rule, kind: 'allow' | 'deny'): CompiledRule {
  const prefix = (typeof rule === 'string' ? rule : rule.prefix).trim();
  const match = typeof rule === 'string' ? [] : [...(rule.match ?? [])];
  const notMatch = typeof rule === 'string' ? [] : [...(rule.not_match ?? [])];
  const bad = (why: string) =>
    new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Invalid ${kind} rule "${prefix}": ${why}. A rule is a command prefix of literal words, such as "git push", or "*" for every command.`,
      { data: { rule: prefix, kind } },
    );
  if (prefix === '*') return { kind, prefix, words: [], all: true, label: `${kind} *`, match, notMatch };
  if (prefix === '') throw bad('it is empty');
  if (prefix === REDIRECT_RULE) {
    // Not a command: allows output redirection to files under an allow list.
    return { kind, prefix, words: [REDIRECT_RULE], all: false, label: `${kind} ${prefix}`, match, notMatch };
  }
  const ast = parse(prefix);
  if (ast.errors !== undefined && ast.errors.length > 0)
    throw bad(`it is not valid shell syntax (${ast.errors[0]!.message})`);
  const stmt = ast.commands[0];
  if (ast.commands.length !== 1 || stmt === undefined || stmt.command.type !== 'Command' || stmt.background) {
    throw bad('it must be a single simple command, without ; && || | & or newlines');
  }
  const cmd = stmt.command;
  if (cmd.name === undefined || cmd.prefix.length > 0 || cmd.redirects.length > 0) {
    throw bad('it must start with a program name and have no assignments or redirections');
  }
  const words: string[] = [];
  for (const w of [cmd.name, ...cmd.suffix]) {
    if (w.type !== 'Word') throw bad('it must contain only words');
    const arg = wordToArg(w);
    if (!arg.isStatic) throw bad(`"${w.text}" is not a literal word (no $, globs or braces)`);
    words.push(arg.value);
  }
  words[0] = normaliseName(words[0]!).allowName;
  return { kind, prefix, words, all: false, label: `${kind} ${prefix}`, match, notMatch };
}

/**
 * True when a deny rule matches the finding: the name (in any case) and each following word equal the rule's
 * words. A word
 * only known at run time could be anything, so it matches; a command that gets more arguments at run time
 * (`xargs`) matches a longer rule.
 */
export function denyRuleMatches(rule: CompiledRule, f: Finding): boolean {
  if (!f.runsProgram) return false;
  const first = f.args[0];
  if (first === undefined || !first.isStatic) return true;
  if (rule.all) return true;
  const w0 = rule.words[0]!;
  const name = w0.includes('/') ? f.allowName : f.name;
  // Case-insensitive file systems run `RM` as `rm`: deny rules match the program name in any case.
  if (name.toLowerCase() !== w0.toLowerCase()) return false;
  for (let k = 1; k < rule.words.length; k++) {
    const a = f.args[k];
    if (a === undefined) return f.openEnded;
    if (!a.isStatic) return true;
    if (a.value !== rule.words[k]) return false;
  }
  return true;
}

/**
 * True when an allow rule matches the finding: the name (path kept unless in a system directory) and each
 * following word equal the rule's words, all of them static.
 */
export function allowRuleMatches(rule: CompiledRule, f: Finding): boolean {
  if (!f.runsProgram) return false;
  const first = f.args[0];
  if (first === undefined || !first.isStatic) return false;
  if (rule.all) return true;
  if (f.allowName !== rule.words[0]) return false;
  if (rule.words.length > f.args.length) return false;
  for (let k = 1; k < rule.words.length; k++) {
    const a = f.args[k]!;
    if (!a.isStatic || a.value !== rule.words[k]) return false;
  }
  return true;
}

/** True when the allow rule names `program` and every one of `words` (a word or `word=…`). */
export function allowRuleNames(rule: CompiledRule, program: string, words: readonly string[]): boolean {
  if (rule.all || rule.words[0] !== program) return false;
  const rest = rule.words.slice(1);
  return words.every((w) => rest.some((rw) => rw === w || rw.startsWith(`${w}=`)));
}
