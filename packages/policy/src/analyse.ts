import {
  type Assignment,
  type Command,
  forEachChild,
  type ParameterExpansionPart,
  parse,
  type SyntaxNode,
  type Word,
} from 'unbash';
import {
  ARITHMETIC_TEST_OPERATORS,
  arithmeticWordValue,
  elementSubscript,
  parseExpandedText,
} from './arithmetic.js';
import type { Finding, Issue } from './finding.js';
import type { InnerCommand, Invocation, InvocationSite, Scope, Walk } from './handler-api.js';
import {
  arithmeticIssue,
  dynamicScriptIssue,
  protectedAssignmentIssues,
  protectedVariableIssue,
  uncheckableArithmeticIssue,
} from './issues.js';
import { normaliseName } from './names.js';
import type { OptionScan } from './option-scan.js';
import { PROGRAM_HANDLERS } from './program-handlers.js';
import { ARITHMETIC_BUILTINS, isProtectedVariable } from './programs.js';
import { fileRedirectIssue } from './redirects.js';
import {
  isStdinRedirect,
  resolveStdin,
  type Stdin,
  stdinOf,
  TERMINAL_STDIN,
  UNKNOWN_STDIN,
} from './stdin.js';
import { endsWithContinuation, findHistoryExpansion, MAX_NESTING, nestingDepth } from './text-checks.js';
import {
  type Arg,
  assignmentToArg,
  hereDocText,
  hidesSubstitution,
  holdsSubscriptSubstitution,
  isStaticWord,
  SUBSTITUTION_SYNTAX,
  syntheticArg,
  wordToArg,
} from './words.js';

export type { Finding, Issue } from './finding.js';
export { normaliseName } from './names.js';

/**
 * The analysis of a command (docs/policy.md, "How a command is checked"): a walk over its bash syntax that
 * finds every simple command it would run, normalised and unwrapped, with the built-in issues found. What a
 * program runs or changes is told by its handler (`program-handlers.ts`); the walk follows it.
 */

/** Options of {@link analyseCommand}. */
export interface AnalyseOptions {
  /** Deepest nesting of strings run as commands (`bash -c "eval '…'"`) before denying. Default 8. */
  readonly maxDepth?: number;
  /** Deny `!` history expansion (as typed into an interactive bash). Default true. */
  readonly historyExpansion?: boolean;
}

/** Literal text fed to a shell longer than this is not checked suffix by suffix, and so is denied. */
const MAX_FED_SCRIPT = 2048;
/** Characters parsed per evaluation before giving up (suffix checks are quadratic). */
const PARSE_BUDGET = 2_000_000;
/** Findings per evaluation before giving up. */
const FINDINGS_BUDGET = 20_000;
/** How a command found in arithmetic text is run, for explanations. */
const ARITHMETIC_VIA = 'in text bash evaluates arithmetically';

/**
 * Parses `source` with a real bash parser and returns every simple command it would run, normalised and
 * unwrapped, with the built-in issues found. Pure and independent of any rules.
 */
export function analyseCommand(source: string, options: AnalyseOptions = {}): Finding[] {
  const tooDeep = () => {
    const failed = new CommandWalk(0);
    failed.tooDeep(source);
    return failed.findings;
  };
  if (nestingDepth(source) > MAX_NESTING) return tooDeep();
  const walk = new CommandWalk(options.maxDepth ?? 8);
  try {
    walk.input(source, options.historyExpansion ?? true);
  } catch (error) {
    // Fails closed: input nested past what the parser's recursion can follow is a denial, not a crash.
    if (error instanceof RangeError) return tooDeep();
    throw error;
  }
  return walk.findings;
}

/** The walk over one input: its syntax, the commands in it, and what they run. */
class CommandWalk implements Walk {
  readonly findings: Finding[] = [];
  /** > 0 while analysing suffixes of a fed script. */
  private speculative = 0;
  private parsed = 0;
  /** Arguments already checked as arithmetic text (a wrapper and the command it runs share them). */
  private readonly checkedArguments = new WeakSet<Arg>();

  constructor(private readonly maxDepth: number) {}

  /** Walks the input typed at the top level, after the checks of its raw text. */
  input(source: string, historyExpansion: boolean): void {
    const scope = topScope(source);
    if (historyExpansion) {
      const at = findHistoryExpansion(source);
      if (at >= 0) {
        this.construct(source, scope, {
          rule: 'policy:history-expansion',
          message: `"${source.slice(at, at + 12)}" would be rewritten by bash history expansion before it runs`,
        });
      }
    }
    if (endsWithContinuation(source)) {
      this.construct(source, scope, {
        rule: 'policy:incomplete',
        message:
          'the input ends with a line continuation, so the shell would join it with whatever comes next',
      });
    }
    this.script(source, scope);
  }

  /** Records that the input nests past {@link MAX_NESTING}, the parser's depth limit. */
  tooDeep(source: string): void {
    this.construct(source.slice(0, 200), topScope(source), {
      rule: 'policy:too-deep',
      message: `the input nests brackets, substitutions or subshells more than ${MAX_NESTING} deep, past the parser's depth limit`,
    });
  }

  /** Parses and walks a script (the input, or a string run as commands). */
  private script(source: string, scope: Scope): void {
    if (this.withinLimits(source, scope)) this.visit(parse(source), scope);
  }

  /**
   * True when `source`, met at `scope.depth`, may be parsed: within the nesting depth and the parse budget.
   * Otherwise records why not (a denial) and returns false.
   */
  private withinLimits(source: string, scope: Scope): boolean {
    if (scope.depth > this.maxDepth) {
      this.construct(source, scope, {
        rule: 'policy:too-deep',
        message: `strings run as commands are nested more than ${this.maxDepth} deep`,
      });
      return false;
    }
    this.parsed += source.length;
    if (this.parsed > PARSE_BUDGET) {
      if (this.parsed - source.length <= PARSE_BUDGET) {
        this.construct(source.slice(0, 200), scope, {
          rule: 'policy:too-complex',
          message: 'the input needs too much parsing to be checked',
        });
      }
      return false;
    }
    return true;
  }

  /**
   * Records a construct (not a program: also a command of assignments only) with its issue or issues.
   */
  private construct(text: string, scope: Scope, issue: Issue | Issue[], args: Arg[] = []): Finding {
    const finding: Finding = {
      text,
      args,
      name: '',
      allowName: '',
      runsProgram: false,
      transparent: true,
      openEnded: false,
      parent: scope.parent,
      offsetInParent: undefined,
      via: scope.via,
      issues: Array.isArray(issue) ? issue : [issue],
      speculative: this.speculative > 0,
    };
    this.findings.push(finding);
    return finding;
  }

  private visit(node: SyntaxNode, scope: Scope): void {
    switch (node.type) {
      case 'Script': {
        const inner = node.source === undefined ? scope : { ...scope, source: node.source };
        if (node.errors !== undefined && node.errors.length > 0 && this.speculative === 0) {
          const error = node.errors[0]!;
          this.construct(inner.source, inner, {
            rule: 'policy:unparseable',
            message: `bash syntax error: ${error.message} (at offset ${error.pos})`,
          });
        }
        for (const statement of node.commands) this.visit(statement, inner);
        return;
      }
      case 'Pipeline': {
        node.commands.forEach((command, i) => {
          const previous = node.commands[i - 1];
          // Only a simple command is the sole reader of its pipe; in a group or subshell another command
          // could read part of it first.
          const stdin: Stdin =
            previous === undefined
              ? scope.stdin
              : command.type === 'Command'
                ? { kind: 'pipe', from: previous }
                : UNKNOWN_STDIN;
          this.visit(command, { ...scope, stdin });
        });
        return;
      }
      case 'Redirected': {
        const inner = node.redirects.some(isStdinRedirect) ? { ...scope, stdin: UNKNOWN_STDIN } : scope;
        this.visit(node.command, inner);
        for (const redirect of node.redirects) this.visit(redirect, scope);
        return;
      }
      case 'Command': {
        this.command(node, scope);
        const inner = scope.stdin.kind === 'pipe' ? { ...scope, stdin: UNKNOWN_STDIN } : scope;
        this.visitChildren(node, inner);
        return;
      }
      case 'Function': {
        const name = node.name.value;
        this.construct(
          scope.source.slice(node.pos, node.end),
          scope,
          {
            rule: 'policy:function-definition',
            message: `defining the function "${name}" would change what the command "${name}" means later`,
          },
          [syntheticArg('function'), syntheticArg(name)],
        );
        this.visitChildren(node, { ...scope, stdin: UNKNOWN_STDIN });
        return;
      }
      case 'Coproc':
        this.visitChildren(node, { ...scope, stdin: UNKNOWN_STDIN });
        return;
      case 'ProcessSubstitution':
        if (node.script !== undefined) {
          this.visit(node.script, node.operator === '>' ? { ...scope, stdin: UNKNOWN_STDIN } : scope);
        }
        return;
      case 'For':
      case 'Select': {
        const variable = node.name.value;
        if (isProtectedVariable(variable)) {
          this.construct(scope.source.slice(node.pos, node.end), scope, protectedVariableIssue(variable), [
            syntheticArg(node.type === 'For' ? 'for' : 'select'),
            syntheticArg(variable),
          ]);
        }
        this.visitChildren(node, scope);
        return;
      }
      case 'ParameterExpansion':
        this.parameterExpansion(node, scope);
        this.visitChildren(node, scope);
        return;
      case 'Assignment':
        this.assignmentSubscripts(node, scope);
        this.visitChildren(node, scope);
        return;
      case 'ArithmeticWord':
        this.arithmeticText(
          arithmeticWordValue(node),
          hidesSubstitution(node.parts),
          scope.source.slice(node.pos, node.end),
          scope,
        );
        this.visitChildren(node, scope);
        return;
      case 'ArithmeticCommand':
        // A body the parser could not read as an expression is still arithmetic text.
        if (node.expression === undefined) this.arithmeticText(node.body, false, node.body, scope);
        this.visitChildren(node, scope);
        return;
      case 'TestBinary':
      case 'TestUnary': {
        const operands = node.type === 'TestBinary' ? [node.left, node.right] : [node.operand];
        if (ARITHMETIC_TEST_OPERATORS.has(node.operator)) {
          for (const word of operands)
            this.arithmeticWord(word, scope.source.slice(node.pos, node.end), scope);
        }
        this.visitChildren(node, scope);
        return;
      }
      case 'Redirect': {
        const issue = fileRedirectIssue(node);
        if (issue !== undefined) this.construct(scope.source.slice(node.pos, node.end), scope, issue);
        this.visitChildren(node, scope);
        return;
      }
      case 'HereDoc': {
        if (scope.depth === 0 && node.closing === undefined) {
          this.construct(scope.source.slice(node.pos, node.end), scope, {
            rule: 'policy:incomplete',
            message: `the here-document is not closed by "${node.delimiter?.value ?? ''}", so the shell would read what comes next as its body`,
          });
        }
        const body = hereDocText(node);
        if (body !== undefined) this.storedText(body, scope.source.slice(node.pos, node.end), scope);
        this.visitChildren(node, scope);
        return;
      }
      default:
        this.visitChildren(node, scope);
    }
  }

  private visitChildren(node: SyntaxNode, scope: Scope): void {
    forEachChild(node, (child) => this.visit(child, scope));
  }

  private parameterExpansion(node: ParameterExpansionPart, scope: Scope): void {
    const operation = node.operation;
    if (node.index !== undefined) this.arithmeticWord(node.index, node.text, scope);
    if (operation?.type === 'Slice') {
      this.arithmeticWord(operation.offset, node.text, scope);
      if (operation.length !== undefined) this.arithmeticWord(operation.length, node.text, scope);
    }
    if (operation === undefined) return;
    if (operation.type === 'Transform' && operation.operand.value.includes('P')) {
      this.construct(node.text, scope, {
        rule: 'policy:prompt-expansion',
        message: `"${node.text}" expands a variable as a prompt string, which runs the command substitutions in it`,
      });
    }
    if (
      operation.type === 'Default' &&
      (operation.operator === '=' || operation.operator === ':=') &&
      isProtectedVariable(node.parameter)
    ) {
      this.construct(node.text, scope, protectedVariableIssue(node.parameter));
    }
  }

  /**
   * Text that bash evaluates arithmetically: `value` is the text with the shell's quotes removed (undefined
   * when part of it is only known at run time, `hidden` then telling whether its quoted or escaped text
   * holds substitution syntax). Quotes do not hide expansions there, so the substitutions in it are found
   * and checked as commands, run by a construct that is denied with them; what cannot be checked is denied.
   */
  private arithmeticText(value: string | undefined, hidden: boolean, display: string, scope: Scope): void {
    if (value === undefined) {
      if (hidden) {
        this.construct(
          display,
          scope,
          uncheckableArithmeticIssue(display, 'part of it is only known at run time'),
        );
      }
      return;
    }
    if (!SUBSTITUTION_SYNTAX.test(value)) return;
    const construct = this.construct(display, scope, arithmeticIssue(display));
    const inner: Scope = {
      source: value,
      depth: scope.depth + 1,
      stdin: UNKNOWN_STDIN,
      parent: construct,
      via: ARITHMETIC_VIA,
    };
    if (!this.withinLimits(value, inner)) return;
    const expanded = parseExpandedText(value);
    const parts = expanded.body?.parts;
    if (!expanded.complete || parts === undefined) {
      construct.issues.push(uncheckableArithmeticIssue(display, 'its substitutions do not parse'));
      return;
    }
    for (const part of parts) this.visit(part, { ...inner, source: expanded.source });
    if (hidesSubstitution(parts)) {
      construct.issues.push(
        uncheckableArithmeticIssue(
          display,
          'it holds escaped substitution syntax, which bash may run when it evaluates the text again',
        ),
      );
    }
  }

  /** A word bash evaluates arithmetically (a subscript, an offset, a `[[ -eq ]]` operand). */
  private arithmeticWord(word: Word, display: string, scope: Scope): void {
    this.arithmeticText(
      isStaticWord(word) ? word.value : undefined,
      hidesSubstitution(word.parts),
      display,
      scope,
    );
  }

  /**
   * A static string that bash would run commands from if it ever evaluated it arithmetically (an argument,
   * an assigned value, a here-document): checked as arithmetic text, since a later `$((x))`, `[[ $x -eq 0 ]]`
   * or `${!x}` evaluates it.
   */
  private storedText(value: string, display: string, scope: Scope): void {
    if (holdsSubscriptSubstitution(value)) this.arithmeticText(value, false, display, scope);
  }

  /** The subscripts of an assignment: `x[SUBSCRIPT]=…` and the elements `[SUBSCRIPT]=…` of `x=(…)`. */
  private assignmentSubscripts(node: Assignment, scope: Scope): void {
    if (node.index !== undefined) this.arithmeticWord(node.index, node.text, scope);
    if (node.value.type !== 'ArrayValue') return;
    for (const element of node.value.elements) {
      if (!element.text.startsWith('[')) continue;
      if (isStaticWord(element)) {
        this.arithmeticText(elementSubscript(element.value), false, element.text, scope);
      } else {
        this.arithmeticText(undefined, hidesSubstitution(element.parts), element.text, scope);
      }
    }
  }

  /** A simple command: its assignments, then the program it runs (if any). */
  private command(node: Command, scope: Scope): void {
    const text = scope.source.slice(node.pos, node.end);
    const issues: Issue[] = [];
    const prefixArgs: Arg[] = [];
    for (const assignment of node.prefix) {
      if (assignment.type !== 'Assignment') continue;
      const arg = assignmentToArg(assignment);
      prefixArgs.push(arg);
      if (isProtectedVariable(assignment.name)) issues.push(protectedVariableIssue(assignment.name));
      if (arg.isStatic) this.storedText(arg.value, assignment.text, scope);
      else if (assignment.value.type === 'Word' && holdsHiddenSubscriptSyntax(assignment.value)) {
        this.arithmeticText(undefined, true, assignment.text, scope);
      }
    }
    if (node.name === undefined) {
      this.construct(text, scope, issues, prefixArgs);
      return;
    }
    const args: Arg[] = [wordToArg(node.name)];
    for (const word of node.suffix) {
      if (word.type === 'Word') args.push(wordToArg(word));
      else if (word.type === 'Assignment') args.push(assignmentToArg(word));
    }
    this.invoke(args, {
      text,
      redirects: node.redirects,
      scope,
      parent: scope.parent,
      offsetInParent: undefined,
      via: scope.via,
      openEnded: false,
      issues,
    });
  }

  /** Records one program invocation and follows whatever it runs (its handler says what). */
  private invoke(args: readonly Arg[], site: InvocationSite): Finding {
    if (this.findings.length === FINDINGS_BUDGET) {
      this.construct(site.text.slice(0, 200), site.scope, {
        rule: 'policy:too-complex',
        message: 'the input contains too many commands to be checked',
      });
    }
    const first = args[0];
    const finding: Finding = {
      text: site.text,
      args,
      name: '',
      allowName: '',
      runsProgram: first !== undefined,
      transparent: false,
      openEnded: site.openEnded,
      parent: site.parent,
      offsetInParent: site.offsetInParent,
      via: site.via,
      issues: site.issues,
      speculative: this.speculative > 0,
    };
    this.findings.push(finding);
    if (first === undefined) {
      // A wrapper with nothing after it whose command comes from appended arguments (xargs env).
      return finding;
    }
    if (!first.isStatic) {
      finding.name = first.text;
      finding.allowName = first.text;
      finding.issues.push({
        rule: 'policy:dynamic-name',
        message: `the command name "${first.text}" is only known at run time, so it could be any program`,
      });
      return finding;
    }
    const { name, allowName } = normaliseName(first.value);
    finding.name = name;
    finding.allowName = allowName;
    for (const word of args) this.argumentText(word, finding, site.scope);
    PROGRAM_HANDLERS.get(name)?.({ finding, args, redirects: site.redirects, scope: site.scope }, this);
    return finding;
  }

  /**
   * An argument as text bash may evaluate arithmetically: a static one is checked as {@link storedText}
   * (once, though wrappers pass it on to the command they run); one only known at run time whose quoted
   * text holds substitution syntax cannot be checked when an arithmetic builtin receives it.
   */
  private argumentText(word: Arg, finding: Finding, scope: Scope): void {
    const check = word.isStatic
      ? holdsSubscriptSubstitution(word.value)
      : word.hidesSubstitution === true && ARITHMETIC_BUILTINS.has(finding.name);
    if (!check || this.checkedArguments.has(word)) return;
    this.checkedArguments.add(word);
    this.arithmeticText(word.isStatic ? word.value : undefined, true, word.text, scope);
  }

  invokeInner(invocation: Invocation, args: readonly Arg[], how: InnerCommand): Finding {
    return this.invoke(args, {
      text: args.map((a) => a.text).join(' '),
      redirects: invocation.redirects,
      scope: invocation.scope,
      parent: invocation.finding,
      offsetInParent: how.offsetInParent,
      via: how.via,
      openEnded: how.openEnded,
      issues: [],
    });
  }

  runCommand(
    invocation: Invocation,
    command: readonly Arg[],
    offset: number | undefined,
    openEnded = invocation.finding.openEnded,
  ): void {
    const wrapper = invocation.finding;
    wrapper.transparent = true;
    if (command.length === 0 && openEnded) {
      wrapper.issues.push({
        rule: 'policy:dynamic-name',
        message: `"${wrapper.name}" runs a command taken from its input at run time, so it could be any program`,
      });
      return;
    }
    if (command.length === 0) return;
    this.invokeInner(invocation, command, { offsetInParent: offset, via: wrapper.name, openEnded });
  }

  runAfterOptions(
    invocation: Invocation,
    args: readonly Arg[],
    scan: OptionScan,
    openEnded = invocation.finding.openEnded,
  ): void {
    const wrapper = invocation.finding;
    if (scan.dynamic) {
      wrapper.transparent = true;
      wrapper.issues.push({
        rule: 'policy:dynamic-name',
        message: `"${args[scan.index]?.text ?? ''}" is only known at run time, so "${wrapper.name}" could run any program`,
      });
      return;
    }
    wrapper.issues.push(...protectedAssignmentIssues(scan.assignments));
    this.runCommand(invocation, args.slice(scan.index), scan.index, openEnded);
  }

  runScript(source: string, invocation: Invocation, via: string): void {
    this.nestedScript(source, invocation, UNKNOWN_STDIN, via);
  }

  /** A string run as commands by `invocation` (bash -c, eval, trap, a literal fed to a shell …). */
  private nestedScript(source: string, invocation: Invocation, stdin: Stdin, via: string): void {
    this.script(source, {
      source,
      depth: invocation.scope.depth + 1,
      stdin,
      parent: invocation.finding,
      via,
    });
  }

  runShellString(invocation: Invocation, words: readonly Arg[], what: string): void {
    const shell = invocation.finding;
    shell.transparent = true;
    if (words.length === 0) return;
    if (!words.every((w) => w.isStatic)) {
      shell.issues.push(dynamicScriptIssue(what, 'its command string is only known at run time'));
      return;
    }
    this.runScript(words.map((w) => w.value).join(' '), invocation, `in a ${what} string`);
  }

  runShellInput(invocation: Invocation, what: string): void {
    const shell = invocation.finding;
    const stdin = resolveStdin(stdinOf(invocation.redirects, invocation.scope.stdin));
    if (stdin.kind === 'terminal') return; // interactive: typed input is checked as it is typed
    shell.transparent = true;
    if (stdin.kind === 'literal') {
      shell.issues.push({
        rule: 'policy:shell-input',
        message: `text fed to ${what} runs as commands that an allow list cannot vouch for; run them directly instead`,
        allowListOnly: true,
      });
      this.runFedScript(stdin.text, invocation, what);
      return;
    }
    shell.issues.push(
      dynamicScriptIssue(
        what,
        'it reads commands from its input, which is not literal text (a pipe from a program, a file or a variable)',
      ),
    );
  }

  /**
   * Literal text a shell reads as its script from stdin. The shell reads it bit by bit, and a command of the
   * script that reads its input consumes what follows, so the shell may go on with any suffix of the text:
   * all of them are checked (speculatively, outside a speculation already).
   */
  runFedScript(text: string, invocation: Invocation, what: string): void {
    this.runScript(text, invocation, `text fed to ${what}`);
    if (this.speculative > 0) return;
    if (text.length > MAX_FED_SCRIPT) {
      invocation.finding.issues.push(
        dynamicScriptIssue(
          what,
          `the text fed to it is longer than ${MAX_FED_SCRIPT} characters, too long to check`,
        ),
      );
      return;
    }
    this.speculatively(() => {
      for (let i = 1; i < text.length; i++) {
        this.runScript(text.slice(i), invocation, `text fed to ${what}, if its own commands read part of it`);
      }
    });
  }

  speculatively(check: () => void): void {
    this.speculative++;
    try {
      check();
    } finally {
      this.speculative--;
    }
  }
}

/** The scope of the input typed at the top level. */
function topScope(source: string): Scope {
  return { source, depth: 0, stdin: TERMINAL_STDIN, parent: undefined, via: undefined };
}

/** A word only known at run time whose quoted text holds substitution syntax inside a subscript. */
function holdsHiddenSubscriptSyntax(word: Word): boolean {
  return !isStaticWord(word) && hidesSubstitution(word.parts) && word.text.includes('[');
}
