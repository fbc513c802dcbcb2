import { posix } from 'node:path';
import {
  type Assignment as AssignmentNode,
  type Command,
  type CommandNode,
  forEachChild,
  type ParameterExpansionPart,
  parse,
  type Redirection,
  type SyntaxNode,
  type Word,
} from 'unbash';
import {
  ARITHMETIC_TEST_OPERATORS,
  arithmeticWordValue,
  elementSubscript,
  parseExpandedText,
} from './arithmetic.js';
import { echoOutput, printfOutput } from './literal.js';
import {
  ARITHMETIC_BUILTINS,
  COMMAND_RUNNERS,
  type CommandRunner,
  FIND_PRIMARIES_WITH_VALUE,
  FIND_SENSITIVE_PRIMARIES,
  GIT_BUILTIN_COMMANDS,
  GIT_GLOBAL_OPTIONS_WITH_VALUE,
  GIT_RISKY_SUBCOMMANDS,
  isProtectedVariable,
  SCHEDULERS,
  SHELL_PROGRAMS,
  SYSTEM_BIN_DIRS,
} from './programs.js';
import {
  type Arg,
  assignedName,
  assignmentToArg,
  hereDocText,
  hidesSubstitution,
  holdsSubscriptSubstitution,
  isStaticWord,
  SUBSTITUTION_SYNTAX,
  syntheticArg,
  variableNameOf,
  wordToArg,
} from './words.js';

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
 * finding for the wrapper and one for the command it runs (`child`).
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

/** Options of {@link analyseCommand}. */
export interface AnalyseOptions {
  /** Deepest nesting of strings run as commands (`bash -c "eval '…'"`) before denying. Default 8. */
  readonly maxDepth?: number;
  /** Deny `!` history expansion (as typed into an interactive bash). Default true. */
  readonly historyExpansion?: boolean;
}

type Stdin =
  | { readonly kind: 'terminal' }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'pipe'; readonly from: CommandNode };

interface Ctx {
  readonly source: string;
  readonly depth: number;
  readonly stdin: Stdin;
  readonly parent: Finding | undefined;
  readonly via: string | undefined;
}

interface InvocationInfo {
  readonly text: string;
  readonly redirects: readonly Redirection[];
  readonly ctx: Ctx;
  readonly parent: Finding | undefined;
  readonly offsetInParent: number | undefined;
  readonly via: string | undefined;
  readonly openEnded: boolean;
  readonly issues: Issue[];
}

const UNKNOWN: Stdin = { kind: 'unknown' };
const TERMINAL: Stdin = { kind: 'terminal' };

/** Literal text fed to a shell longer than this is not checked suffix by suffix, and so is denied. */
const MAX_FED_SCRIPT = 2048;
/** Characters parsed per evaluation before giving up (suffix checks are quadratic). */
const PARSE_BUDGET = 2_000_000;
/** Findings per evaluation before giving up. */
const FINDINGS_BUDGET = 20_000;

/**
 * Parses `source` with a real bash parser and returns every simple command it would run, normalised and
 * unwrapped, with the built-in issues found. Pure and independent of any rules.
 */
export function analyseCommand(source: string, options: AnalyseOptions = {}): Finding[] {
  const tooDeep = () => {
    const fail = new Analyser(0);
    fail.tooDeep(source);
    return fail.findings;
  };
  if (nestingDepth(source) > MAX_NESTING) return tooDeep();
  const analyser = new Analyser(options.maxDepth ?? 8);
  try {
    analyser.root(source, options.historyExpansion ?? true);
  } catch (error) {
    // Fails closed: input nested past what the parser's recursion can follow is a denial, not a crash.
    if (error instanceof RangeError) return tooDeep();
    throw error;
  }
  return analyser.findings;
}

/** Deepest nesting of brackets, braces and parentheses (`$(`, `((`, `{`, `[`) the policy parses. */
export const MAX_NESTING = 100;

/** How deep brackets nest in the raw text (quotes are not skipped, so this over-counts, failing closed). */
function nestingDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  for (const ch of source) {
    if (ch === '(' || ch === '{' || ch === '[') deepest = Math.max(deepest, ++depth);
    else if ((ch === ')' || ch === '}' || ch === ']') && depth > 0) depth--;
  }
  return deepest;
}

/** Normalises a command name: `/usr/bin/../bin/rm` → `rm` (for both); `./x/rm` → `rm` and `x/rm`. */
export function normaliseName(value: string): { name: string; allowName: string } {
  if (!value.includes('/')) return { name: value, allowName: value };
  let norm = posix.normalize(value);
  if (norm.length > 1 && norm.endsWith('/')) norm = norm.slice(0, -1);
  const slash = norm.lastIndexOf('/');
  const name = slash >= 0 ? norm.slice(slash + 1) : norm;
  const dir = slash > 0 ? norm.slice(0, slash) : slash === 0 ? '/' : '';
  if (SYSTEM_BIN_DIRS.has(dir)) return { name, allowName: name };
  return { name, allowName: norm.includes('/') ? norm : `./${norm}` };
}

class Analyser {
  readonly findings: Finding[] = [];
  /** > 0 while analysing suffixes of a fed script. */
  private speculative = 0;
  private parsed = 0;
  /** Arguments already checked as arithmetic text (a wrapper and the command it runs share them). */
  private readonly checkedArguments = new WeakSet<Arg>();

  constructor(private readonly maxDepth: number) {}

  root(source: string, historyExpansion: boolean): void {
    const ctx: Ctx = { source, depth: 0, stdin: TERMINAL, parent: undefined, via: undefined };
    if (historyExpansion) {
      const at = findHistoryExpansion(source);
      if (at >= 0) {
        this.construct(source, ctx, {
          rule: 'policy:history-expansion',
          message: `"${source.slice(at, at + 12)}" would be rewritten by bash history expansion before it runs`,
        });
      }
    }
    if (endsWithContinuation(source)) {
      this.construct(source, ctx, {
        rule: 'policy:incomplete',
        message:
          'the input ends with a line continuation, so the shell would join it with whatever comes next',
      });
    }
    this.script(source, ctx);
  }

  /** Records that the input nests past {@link MAX_NESTING}, the parser's depth limit. */
  tooDeep(source: string): void {
    this.construct(
      source.slice(0, 200),
      { source, depth: 0, stdin: TERMINAL, parent: undefined, via: undefined },
      {
        rule: 'policy:too-deep',
        message: `the input nests brackets, substitutions or subshells more than ${MAX_NESTING} deep, past the parser's depth limit`,
      },
    );
  }

  /** Parses and walks a script (the input, or a string run as commands). */
  private script(source: string, ctx: Ctx): void {
    if (this.withinLimits(source, ctx)) this.visit(parse(source), ctx);
  }

  /**
   * True when `source`, met at `ctx.depth`, may be parsed: within the nesting depth and the parse budget.
   * Otherwise records why not (a denial) and returns false.
   */
  private withinLimits(source: string, ctx: Ctx): boolean {
    if (ctx.depth > this.maxDepth) {
      this.construct(source, ctx, {
        rule: 'policy:too-deep',
        message: `strings run as commands are nested more than ${this.maxDepth} deep`,
      });
      return false;
    }
    this.parsed += source.length;
    if (this.parsed > PARSE_BUDGET) {
      if (this.parsed - source.length <= PARSE_BUDGET) {
        this.construct(source.slice(0, 200), ctx, {
          rule: 'policy:too-complex',
          message: 'the input needs too much parsing to be checked',
        });
      }
      return false;
    }
    return true;
  }

  /**
   * Text that bash evaluates arithmetically: `value` is the text with the shell's quotes removed (undefined
   * when part of it is only known at run time, `hidden` then telling whether its quoted or escaped text
   * holds substitution syntax). Quotes do not hide expansions there, so the substitutions in it are found
   * and checked as commands, run by a construct that is denied with them; what cannot be checked is denied.
   */
  private arithmeticText(value: string | undefined, hidden: boolean, display: string, ctx: Ctx): void {
    if (value === undefined) {
      if (hidden)
        this.construct(display, ctx, uncheckableArithmetic(display, 'part of it is only known at run time'));
      return;
    }
    if (!SUBSTITUTION_SYNTAX.test(value)) return;
    const construct = this.construct(display, ctx, arithmeticIssue(display));
    const inner: Ctx = {
      source: value,
      depth: ctx.depth + 1,
      stdin: UNKNOWN,
      parent: construct,
      via: ARITHMETIC_VIA,
    };
    if (!this.withinLimits(value, inner)) return;
    const expanded = parseExpandedText(value);
    const parts = expanded.body?.parts;
    if (!expanded.complete || parts === undefined) {
      construct.issues.push(uncheckableArithmetic(display, 'its substitutions do not parse'));
      return;
    }
    for (const part of parts) this.visit(part, { ...inner, source: expanded.source });
    if (hidesSubstitution(parts)) {
      construct.issues.push(
        uncheckableArithmetic(
          display,
          'it holds escaped substitution syntax, which bash may run when it evaluates the text again',
        ),
      );
    }
  }

  /** A word bash evaluates arithmetically (a subscript, an offset, a `[[ -eq ]]` operand). */
  private arithmeticWord(word: Word, display: string, ctx: Ctx): void {
    this.arithmeticText(
      isStaticWord(word) ? word.value : undefined,
      hidesSubstitution(word.parts),
      display,
      ctx,
    );
  }

  /**
   * A static string that bash would run commands from if it ever evaluated it arithmetically (an argument,
   * an assigned value, a here-document): checked as arithmetic text, since a later `$((x))`, `[[ $x -eq 0 ]]`
   * or `${!x}` evaluates it.
   */
  private storedText(value: string, display: string, ctx: Ctx): void {
    if (holdsSubscriptSubstitution(value)) this.arithmeticText(value, false, display, ctx);
  }

  /** The subscripts of an assignment: `x[SUBSCRIPT]=…` and the elements `[SUBSCRIPT]=…` of `x=(…)`. */
  private assignmentSubscripts(node: AssignmentNode, ctx: Ctx): void {
    if (node.index !== undefined) this.arithmeticWord(node.index, node.text, ctx);
    if (node.value.type !== 'ArrayValue') return;
    for (const element of node.value.elements) {
      if (!element.text.startsWith('[')) continue;
      if (isStaticWord(element)) {
        this.arithmeticText(elementSubscript(element.value), false, element.text, ctx);
      } else {
        this.arithmeticText(undefined, hidesSubstitution(element.parts), element.text, ctx);
      }
    }
  }

  /** A string run as commands by `finding` (bash -c, eval, trap, a literal fed to a shell …). */
  private nested(source: string, finding: Finding, ctx: Ctx, stdin: Stdin, via: string): void {
    this.script(source, { source, depth: ctx.depth + 1, stdin, parent: finding, via });
  }

  private construct(text: string, ctx: Ctx, issue: Issue, args: Arg[] = []): Finding {
    const f: Finding = {
      text,
      args,
      name: '',
      allowName: '',
      runsProgram: false,
      transparent: true,
      openEnded: false,
      parent: ctx.parent,
      offsetInParent: undefined,
      via: ctx.via,
      issues: [issue],
      speculative: this.speculative > 0,
    };
    this.findings.push(f);
    return f;
  }

  private visit(node: SyntaxNode, ctx: Ctx): void {
    switch (node.type) {
      case 'Script': {
        const inner = node.source === undefined ? ctx : { ...ctx, source: node.source };
        if (node.errors !== undefined && node.errors.length > 0 && this.speculative === 0) {
          const e = node.errors[0]!;
          this.construct(inner.source, inner, {
            rule: 'policy:unparseable',
            message: `bash syntax error: ${e.message} (at offset ${e.pos})`,
          });
        }
        for (const s of node.commands) this.visit(s, inner);
        return;
      }
      case 'Pipeline': {
        node.commands.forEach((cmd, i) => {
          const prev = node.commands[i - 1];
          // Only a simple command is the sole reader of its pipe; in a group or subshell another command
          // could read part of it first.
          const stdin: Stdin =
            prev === undefined ? ctx.stdin : cmd.type === 'Command' ? { kind: 'pipe', from: prev } : UNKNOWN;
          this.visit(cmd, { ...ctx, stdin });
        });
        return;
      }
      case 'Redirected': {
        const inner = node.redirects.some(isStdinRedirect) ? { ...ctx, stdin: UNKNOWN } : ctx;
        this.visit(node.command, inner);
        for (const r of node.redirects) this.visit(r, ctx);
        return;
      }
      case 'Command': {
        this.command(node, ctx);
        const inner = ctx.stdin.kind === 'pipe' ? { ...ctx, stdin: UNKNOWN } : ctx;
        forEachChild(node, (child) => this.visit(child, inner));
        return;
      }
      case 'Function': {
        const name = node.name.value;
        this.construct(
          ctx.source.slice(node.pos, node.end),
          ctx,
          {
            rule: 'policy:function-definition',
            message: `defining the function "${name}" would change what the command "${name}" means later`,
          },
          [syntheticArg('function'), syntheticArg(name)],
        );
        forEachChild(node, (child) => this.visit(child, { ...ctx, stdin: UNKNOWN }));
        return;
      }
      case 'Coproc':
        forEachChild(node, (child) => this.visit(child, { ...ctx, stdin: UNKNOWN }));
        return;
      case 'ProcessSubstitution':
        if (node.script !== undefined) {
          this.visit(node.script, node.operator === '>' ? { ...ctx, stdin: UNKNOWN } : ctx);
        }
        return;
      case 'For':
      case 'Select': {
        const v = node.name.value;
        if (isProtectedVariable(v)) {
          this.construct(ctx.source.slice(node.pos, node.end), ctx, protectedIssue(v), [
            syntheticArg(node.type === 'For' ? 'for' : 'select'),
            syntheticArg(v),
          ]);
        }
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      }
      case 'ParameterExpansion':
        this.parameterExpansion(node, ctx);
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      case 'Assignment':
        this.assignmentSubscripts(node, ctx);
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      case 'ArithmeticWord':
        this.arithmeticText(
          arithmeticWordValue(node),
          hidesSubstitution(node.parts),
          ctx.source.slice(node.pos, node.end),
          ctx,
        );
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      case 'ArithmeticCommand':
        // A body the parser could not read as an expression is still arithmetic text.
        if (node.expression === undefined) this.arithmeticText(node.body, false, node.body, ctx);
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      case 'TestBinary':
      case 'TestUnary': {
        const operands = node.type === 'TestBinary' ? [node.left, node.right] : [node.operand];
        if (ARITHMETIC_TEST_OPERATORS.has(node.operator)) {
          for (const w of operands) this.arithmeticWord(w, ctx.source.slice(node.pos, node.end), ctx);
        }
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      }
      case 'Redirect': {
        const issue = fileRedirectIssue(node);
        if (issue !== undefined) this.construct(ctx.source.slice(node.pos, node.end), ctx, issue);
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      }
      case 'HereDoc': {
        if (ctx.depth === 0 && node.closing === undefined) {
          this.construct(ctx.source.slice(node.pos, node.end), ctx, {
            rule: 'policy:incomplete',
            message: `the here-document is not closed by "${node.delimiter?.value ?? ''}", so the shell would read what comes next as its body`,
          });
        }
        const body = hereDocText(node);
        if (body !== undefined) this.storedText(body, ctx.source.slice(node.pos, node.end), ctx);
        forEachChild(node, (child) => this.visit(child, ctx));
        return;
      }
      default:
        forEachChild(node, (child) => this.visit(child, ctx));
    }
  }

  private parameterExpansion(node: ParameterExpansionPart, ctx: Ctx): void {
    const op = node.operation;
    if (node.index !== undefined) this.arithmeticWord(node.index, node.text, ctx);
    if (op?.type === 'Slice') {
      this.arithmeticWord(op.offset, node.text, ctx);
      if (op.length !== undefined) this.arithmeticWord(op.length, node.text, ctx);
    }
    if (op === undefined) return;
    if (op.type === 'Transform' && op.operand.value.includes('P')) {
      this.construct(node.text, ctx, {
        rule: 'policy:prompt-expansion',
        message: `"${node.text}" expands a variable as a prompt string, which runs the command substitutions in it`,
      });
    }
    if (
      op.type === 'Default' &&
      (op.operator === '=' || op.operator === ':=') &&
      isProtectedVariable(node.parameter)
    ) {
      this.construct(node.text, ctx, protectedIssue(node.parameter));
    }
  }

  private command(node: Command, ctx: Ctx): void {
    const text = ctx.source.slice(node.pos, node.end);
    const issues: Issue[] = [];
    const prefixArgs: Arg[] = [];
    for (const p of node.prefix) {
      if (p.type !== 'Assignment') continue;
      const arg = assignmentToArg(p);
      prefixArgs.push(arg);
      if (isProtectedVariable(p.name)) issues.push(protectedIssue(p.name));
      if (arg.isStatic) this.storedText(arg.value, p.text, ctx);
      else if (p.value.type === 'Word' && holdsHiddenSubscriptSyntax(p.value)) {
        this.arithmeticText(undefined, true, p.text, ctx);
      }
    }
    if (node.name === undefined) {
      const f: Finding = {
        text,
        args: prefixArgs,
        name: '',
        allowName: '',
        runsProgram: false,
        transparent: true,
        openEnded: false,
        parent: ctx.parent,
        offsetInParent: undefined,
        via: ctx.via,
        issues,
        speculative: this.speculative > 0,
      };
      this.findings.push(f);
      return;
    }
    const args: Arg[] = [wordToArg(node.name)];
    for (const s of node.suffix) {
      if (s.type === 'Word') args.push(wordToArg(s));
      else if (s.type === 'Assignment') args.push(assignmentToArg(s));
    }
    this.invocation(args, {
      text,
      redirects: node.redirects,
      ctx,
      parent: ctx.parent,
      offsetInParent: undefined,
      via: ctx.via,
      openEnded: false,
      issues,
    });
  }

  /** Records one program invocation and follows whatever it runs. */
  private invocation(args: Arg[], info: InvocationInfo): Finding {
    if (this.findings.length === FINDINGS_BUDGET) {
      this.construct(info.text.slice(0, 200), info.ctx, {
        rule: 'policy:too-complex',
        message: 'the input contains too many commands to be checked',
      });
    }
    const first = args[0];
    const f: Finding = {
      text: info.text,
      args,
      name: '',
      allowName: '',
      runsProgram: first !== undefined,
      transparent: false,
      openEnded: info.openEnded,
      parent: info.parent,
      offsetInParent: info.offsetInParent,
      via: info.via,
      issues: info.issues,
      speculative: this.speculative > 0,
    };
    this.findings.push(f);
    if (first === undefined) {
      // A wrapper with nothing after it whose command comes from appended arguments (xargs env).
      return f;
    }
    if (!first.isStatic) {
      f.name = first.text;
      f.allowName = first.text;
      f.issues.push({
        rule: 'policy:dynamic-name',
        message: `the command name "${first.text}" is only known at run time, so it could be any program`,
      });
      return f;
    }
    const { name, allowName } = normaliseName(first.value);
    f.name = name;
    f.allowName = allowName;
    for (const a of args) this.argumentText(a, f, info.ctx);
    this.program(f, args, info);
    return f;
  }

  /**
   * An argument as text bash may evaluate arithmetically: a static one is checked as {@link storedText}
   * (once, though wrappers pass it on to the command they run); one only known at run time whose quoted
   * text holds substitution syntax cannot be checked when an arithmetic builtin receives it.
   */
  private argumentText(a: Arg, f: Finding, ctx: Ctx): void {
    const check = a.isStatic
      ? holdsSubscriptSubstitution(a.value)
      : a.hidesSubstitution === true && ARITHMETIC_BUILTINS.has(f.name);
    if (!check || this.checkedArguments.has(a)) return;
    this.checkedArguments.add(a);
    this.arithmeticText(a.isStatic ? a.value : undefined, true, a.text, ctx);
  }

  /** Runs `inner` (a suffix of `f.args` starting at `offset`, or a new argv) as a child of `f`. */
  private child(
    f: Finding,
    inner: Arg[],
    info: InvocationInfo,
    offset: number | undefined,
    openEnded = f.openEnded,
  ) {
    f.transparent = true;
    if (inner.length === 0 && openEnded) {
      f.issues.push({
        rule: 'policy:dynamic-name',
        message: `"${f.name}" runs a command taken from its input at run time, so it could be any program`,
      });
      return;
    }
    if (inner.length === 0) return;
    this.invocation(inner, {
      ...info,
      text: inner.map((a) => a.text).join(' '),
      parent: f,
      offsetInParent: offset,
      via: f.name,
      openEnded,
      issues: [],
    });
  }

  /** A wrapper whose command starts at `index`; a non-static word before it hides the command. */
  private wrapped(f: Finding, args: Arg[], info: InvocationInfo, scan: Scan, openEnded = f.openEnded): void {
    if (scan.dynamic) {
      f.transparent = true;
      f.issues.push({
        rule: 'policy:dynamic-name',
        message: `"${args[scan.index]?.text ?? ''}" is only known at run time, so "${f.name}" could run any program`,
      });
      return;
    }
    for (const a of scan.assignments) {
      const n = a.value.slice(0, a.value.indexOf('='));
      if (isProtectedVariable(n)) f.issues.push(protectedIssue(n));
    }
    this.child(f, args.slice(scan.index), info, scan.index, openEnded);
  }

  private program(f: Finding, args: Arg[], info: InvocationInfo): void {
    const rest = args.slice(1);
    switch (f.name) {
      case 'env': {
        const scan = scanOptions(args, 1, {
          short: 'uCSP',
          long: ['--unset', '--chdir', '--split-string'],
          env: true,
        });
        const split = scan.values.get('S') ?? scan.values.get('--split-string');
        if (!scan.dynamic && split !== undefined) {
          const words = split.isStatic ? splitEnvString(split.value) : undefined;
          if (words === undefined) {
            f.transparent = true;
            f.issues.push({
              rule: 'policy:dynamic-name',
              message: `the env -S string "${split.text}" could not be split into static words`,
            });
            return;
          }
          for (const a of scan.assignments) {
            const n = a.value.slice(0, a.value.indexOf('='));
            if (isProtectedVariable(n)) f.issues.push(protectedIssue(n));
          }
          // -S words come first; their own leading assignments are environment too.
          const inner = [...words.map((w) => syntheticArg(w)), ...args.slice(scan.index)];
          const innerScan = scanOptions(inner, 0, { env: true });
          this.wrapped(f, inner, info, innerScan);
          return;
        }
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'command': {
        const scan = scanOptions(args, 1, {});
        if (scan.flags.has('v') || scan.flags.has('V')) return; // only looks the name up
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'builtin':
        this.wrapped(f, args, info, scanOptions(args, 1, {}));
        return;
      case 'exec': {
        const scan = scanOptions(args, 1, { short: 'a' });
        if (!scan.dynamic && scan.index >= args.length && !f.openEnded) {
          f.transparent = true;
          if (info.redirects.some(isStdinRedirect)) {
            f.issues.push({
              rule: 'policy:exec-stdin',
              message: '"exec" with its input redirected makes the shell read its next commands from there',
            });
          }
          return;
        }
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'nice':
        this.wrapped(f, args, info, scanOptions(args, 1, { short: 'n', long: ['--adjustment'] }));
        return;
      case 'nohup':
      case 'setsid':
        this.wrapped(f, args, info, scanOptions(args, 1, {}));
        return;
      case 'stdbuf':
        this.wrapped(
          f,
          args,
          info,
          scanOptions(args, 1, { short: 'ioe', long: ['--input', '--output', '--error'] }),
        );
        return;
      case 'time':
        this.wrapped(f, args, info, scanOptions(args, 1, { short: 'fo', long: ['--format', '--output'] }));
        return;
      case 'timeout': {
        const scan = scanOptions(args, 1, { short: 'sk', long: ['--signal', '--kill-after'] });
        if (!scan.dynamic) scan.index++; // the duration
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'ionice': {
        const scan = scanOptions(args, 1, {
          short: 'cnpPu',
          long: ['--class', '--classdata', '--pid', '--pgid', '--uid'],
        });
        if (['p', 'P', 'u', '--pid', '--pgid', '--uid'].some((o) => scan.flags.has(o))) return;
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'taskset': {
        const scan = scanOptions(args, 1, {});
        if (scan.flags.has('p') || scan.flags.has('--pid')) return;
        if (!scan.dynamic) scan.index++; // the mask or cpu list
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'chroot': {
        const scan = scanOptions(args, 1, { long: ['--userspec', '--groups'] });
        if (!scan.dynamic) scan.index++; // the new root
        if (!scan.dynamic && scan.index >= args.length && !f.openEnded) {
          this.shellReadingStdin(f, info, 'chroot');
          return;
        }
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'jobs': {
        // `jobs -x CMD ARGS` runs CMD with job specs replaced.
        const x = rest.findIndex((a) => a.isStatic && /^-[a-z]*x/.test(a.value));
        if (x >= 0) this.wrapped(f, args, info, scanOptions(args, x + 2, {}));
        else if (rest.some((a) => !a.isStatic)) {
          f.issues.push({
            rule: 'policy:dynamic-name',
            message: '"jobs" with arguments only known at run time could run a command (-x)',
          });
        }
        return;
      }
      case 'man':
        this.sensitiveWords(f, args, 'man', [['--pager'], ['-P'], ['--html'], ['-H'], ['--browser']]);
        return;
      case 'scp':
      case 'sftp':
        this.sensitiveWords(f, args, f.name, [
          ['-S'],
          [
            '-o',
            /^-o\s*(proxycommand|localcommand|knownhostscommand)|^(proxycommand|localcommand|knownhostscommand)/i,
          ],
        ]);
        return;
      case 'zip':
        this.sensitiveWords(f, args, 'zip', [['--unzip-command'], ['-TT']]);
        return;
      case 'busybox': {
        const next = args[1];
        if (next === undefined || (next.isStatic && next.value.startsWith('-'))) return;
        this.child(f, args.slice(1), info, 1);
        return;
      }
      case 'xargs':
        this.xargs(f, args, info);
        return;
      case 'sudo':
        this.sudo(f, args, info);
        return;
      case 'doas': {
        const scan = scanOptions(args, 1, { short: 'uC' });
        if (scan.flags.has('C')) return;
        if (!scan.dynamic && scan.index >= args.length && !f.openEnded) {
          if (scan.flags.has('s')) this.shellReadingStdin(f, info, 'doas -s');
          return;
        }
        this.wrapped(f, args, info, scan);
        f.transparent = false;
        return;
      }
      case 'su':
      case 'runuser':
        this.su(f, args, info);
        return;
      case 'ssh':
        this.ssh(f, args, info);
        return;
      case 'watch': {
        const scan = scanOptions(args, 1, { short: 'nq', long: ['--interval', '--equexit'] });
        if (scan.dynamic) {
          this.wrapped(f, args, info, scan);
          return;
        }
        if (scan.flags.has('x') || scan.flags.has('--exec')) {
          this.wrapped(f, args, info, scan);
          return;
        }
        this.shellString(f, args.slice(scan.index), info, 'watch');
        return;
      }
      case 'script': {
        const scan = scanOptions(args, 1, { short: 'cEIOBTmo', long: ['--command', '--echo', '--log-in'] });
        const cmd = scan.values.get('c') ?? scan.values.get('--command');
        if (scan.dynamic) this.wrapped(f, args, info, scan);
        else if (cmd !== undefined) this.shellString(f, [cmd], info, 'script -c');
        else this.shellReadingStdin(f, info, 'script');
        return;
      }
      case 'flock': {
        const scan = scanOptions(args, 1, {
          short: 'wEc',
          long: ['--timeout', '--wait', '--conflict-exit-code', '--command'],
        });
        const cmd = scan.values.get('c') ?? scan.values.get('--command');
        if (scan.dynamic) {
          this.wrapped(f, args, info, scan);
          return;
        }
        if (cmd !== undefined) {
          this.shellString(f, [cmd], info, 'flock -c');
          return;
        }
        scan.index++; // the lock file or descriptor
        const after = args[scan.index];
        if (after?.isStatic && (after.value === '-c' || after.value === '--command')) {
          this.shellString(f, args.slice(scan.index + 1, scan.index + 2), info, 'flock -c');
          return;
        }
        this.wrapped(f, args, info, scan);
        return;
      }
      case 'eval': {
        f.transparent = true;
        if (rest.length === 0) return;
        if (!rest.every((a) => a.isStatic)) {
          f.issues.push(dynamicScript('eval', 'its arguments are only known at run time'));
          return;
        }
        this.nested(rest.map((a) => a.value).join(' '), f, info.ctx, UNKNOWN, 'eval');
        return;
      }
      case 'trap':
        this.trap(f, rest, info);
        return;
      case 'source':
      case '.':
        f.issues.push({
          rule: 'policy:source',
          message: `"${f.name}" runs a file's commands in this shell, where they cannot be checked and can redefine commands`,
        });
        return;
      case 'alias':
        if (rest.some((a) => !a.isStatic || a.value.includes('='))) {
          f.issues.push({
            rule: 'policy:alias',
            message: 'alias definitions change what later commands mean',
          });
        }
        return;
      case 'enable':
        f.issues.push({
          rule: 'policy:enable',
          message:
            '"enable" switches shell builtins on or off or loads new ones, changing what later commands mean',
        });
        return;
      case 'hash':
        if (rest.some((a) => !a.isStatic || /^-[a-z]*p/.test(a.value))) {
          f.issues.push({
            rule: 'policy:hash',
            message: '"hash -p" makes a command name run another program',
          });
        }
        return;
      case 'bind':
        if (!rest.every((a) => a.isStatic && /^-[lpPvVsSX]+$/.test(a.value) && !a.value.includes('X'))) {
          f.issues.push({ rule: 'policy:bind', message: '"bind" can make a key run a command' });
        }
        return;
      case 'fc': {
        const listing = rest.some((a) => a.isStatic && /^-[nr]*l[lnr]*$/.test(a.value));
        if (!listing || !rest.every((a) => a.isStatic && !/^-[a-z]*[es]/.test(a.value))) {
          f.issues.push({
            rule: 'policy:fc',
            message: '"fc" runs commands from the history, edited by a program',
          });
        }
        return;
      }
      case 'complete':
      case 'compgen':
        if (rest.some((a) => !a.isStatic || /^-[a-zA-Z]*[CF]/.test(a.value))) {
          f.issues.push({
            rule: 'policy:completion-command',
            message: `"${f.name} -C/-F" runs a command or function to complete words`,
          });
        }
        return;
      case 'export':
      case 'declare':
      case 'typeset':
      case 'readonly':
      case 'local':
        this.declaration(f, rest);
        return;
      case 'read':
        this.variableTargets(f, rest, 'adinNptu', 'a');
        return;
      case 'mapfile':
      case 'readarray': {
        if (rest.some((a) => !a.isStatic || /^-[a-zA-Z]*C/.test(a.value))) {
          f.issues.push({
            rule: 'policy:mapfile-callback',
            message: `"${f.name} -C" runs a command for each line`,
          });
        }
        this.variableTargets(f, rest, 'dnOsuCc', '');
        return;
      }
      case 'printf': {
        const v = rest[0]?.value === '-v' ? rest[1] : undefined;
        if (v !== undefined) this.checkVariableName(f, v);
        return;
      }
      case 'getopts': {
        const v = rest[1];
        if (v !== undefined) this.checkVariableName(f, v);
        return;
      }
      case 'git':
        this.git(f, args);
        return;
      case 'find':
        this.find(f, args, info);
        return;
      case 'tar':
        this.sensitiveWords(f, args, 'tar', [
          ['--to-command'],
          ['--checkpoint-action'],
          ['--use-compress-program'],
          ['--info-script'],
          ['--new-volume-script'],
          ['--rsh-command'],
          ['--rmt-command'],
          ['-I'],
          ['-F'],
        ]);
        return;
      case 'rsync':
        this.sensitiveWords(f, args, 'rsync', [['--rsh'], ['--rsync-path'], ['-e', /^-[a-zA-Z]*e/]]);
        return;
      default:
        if (SHELL_PROGRAMS.has(f.name)) this.shell(f, args, info);
        else if (COMMAND_RUNNERS.has(f.name)) this.runner(f, args, info, COMMAND_RUNNERS.get(f.name)!);
        else if (SCHEDULERS.has(f.name)) this.scheduler(f, args, info);
    }
  }

  /** A wrapper from {@link COMMAND_RUNNERS}: finds what it runs the way its table entry says. */
  private runner(f: Finding, args: Arg[], info: InvocationInfo, spec: CommandRunner): void {
    const stringOptions = spec.commandStringOptions ?? [];
    const programOptions = spec.programOptions ?? [];
    let start = 1;
    if (spec.after !== undefined) {
      const at = args.findIndex((a, i) => i > 0 && a.isStatic && a.value === spec.after);
      if (at < 0) return; // not running a command
      start = at + 1;
    }
    for (let i = start; i < args.length; i++) {
      const a = args[i]!;
      if (!a.isStatic) {
        f.issues.push({
          rule: 'policy:dynamic-name',
          message: `"${a.text}" is only known at run time, so "${f.name}" could run any program`,
        });
        return;
      }
      const v = a.value;
      const eq = v.startsWith('--') ? v.indexOf('=') : -1;
      const option = eq > 0 ? v.slice(0, eq) : v;
      const value = (): Arg | undefined => (eq > 0 ? syntheticArg(v.slice(eq + 1)) : args[i + 1]);
      if (stringOptions.includes(option)) {
        const script = value();
        if (script !== undefined) this.runnerString(f, script, info, `${f.name} ${option}`, spec);
        if (eq < 0) i++;
        continue;
      }
      if (programOptions.includes(option)) {
        const program = value();
        if (program !== undefined) this.child(f, [program], info, undefined, false);
        if (eq < 0) i++;
        continue;
      }
      const address = spec.addressPrefixes?.exec(v);
      if (address) {
        this.shellString(f, [syntheticArg(address[1]!)], info, `${f.name} ${v.slice(0, v.indexOf(':'))}`);
        continue;
      }
      if (!spec.everyWord || v.startsWith('-') || v.startsWith('+')) continue;
      this.speculatively(() => {
        const text = args
          .slice(i)
          .map((w) => w.text)
          .join(' ');
        this.invocation(args.slice(i), {
          ...info,
          text,
          parent: f,
          offsetInParent: i,
          via: f.name,
          issues: [],
        });
        if (spec.shellStrings && /\s/.test(v)) this.nested(v, f, info.ctx, UNKNOWN, `in a ${f.name} string`);
      });
    }
    if (f.name === 'parallel' && !args.slice(1).some((a) => !a.value.startsWith('-')))
      this.shellReadingStdin(f, info, 'parallel');
  }

  /** The value of a runner's command-string option: a shell string, a gdb `!cmd`, or Tcl `spawn cmd`. */
  private runnerString(
    f: Finding,
    script: Arg,
    info: InvocationInfo,
    what: string,
    spec: CommandRunner,
  ): void {
    if (!script.isStatic) {
      f.issues.push(dynamicScript(what, 'its command string is only known at run time'));
      return;
    }
    if (spec.tcl) {
      // Tcl is not shell, but its commands that start programs take the program and its words.
      for (const m of script.value.matchAll(/(?:^|[\s;[{])(?:spawn|exec|system)\s+([^;\n\]}]*)/g)) {
        this.nested(m[1]!.replace(/^-\S*\s+/, ''), f, info.ctx, UNKNOWN, `in a ${what} script`);
      }
      return;
    }
    if (spec.valuePrefixes !== undefined) {
      for (const prefix of spec.valuePrefixes) {
        const m = prefix.exec(script.value);
        if (m) {
          this.shellString(f, [syntheticArg(script.value.slice(m[0].length))], info, what);
          return;
        }
      }
      return;
    }
    this.shellString(f, [script], info, what);
  }

  /** Runs `check` with its findings marked speculative (they only ever add denials). */
  private speculatively(check: () => void): void {
    this.speculative++;
    try {
      check();
    } finally {
      this.speculative--;
    }
  }

  /** `at`, `batch`, `crontab`: commands to run later, read from input or a file. */
  private scheduler(f: Finding, args: Arg[], info: InvocationInfo): void {
    const rest = args.slice(1);
    if (f.name === 'crontab') {
      if (rest.some((a) => a.isStatic && /^-[a-zA-Z]*[lr]/.test(a.value)) && !rest.some((a) => !a.isStatic))
        return;
      f.issues.push(dynamicScript('crontab', 'it installs commands to run later'));
      return;
    }
    if (rest.some((a) => a.isStatic && /^-[a-zA-Z]*[lcrd]$/.test(a.value))) return; // list, show, remove jobs
    if (rest.some((a) => !a.isStatic || a.value.startsWith('-f'))) {
      f.issues.push(dynamicScript(f.name, 'it runs commands from a file later'));
      return;
    }
    const stdin = resolveStdin(stdinOf(info.redirects, info.ctx));
    if (stdin.kind === 'literal') {
      f.transparent = false;
      this.fedScript(stdin.text, f, info.ctx, f.name);
      return;
    }
    f.issues.push(dynamicScript(f.name, 'it runs commands read from its input later'));
  }

  private xargs(f: Finding, args: Arg[], info: InvocationInfo): void {
    const scan = scanOptions(args, 1, {
      short: 'adEILnPs',
      optionalShort: 'eil',
      long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    });
    if (scan.dynamic) {
      this.wrapped(f, args, info, scan, true);
      return;
    }
    let inner = args.slice(scan.index);
    let offset: number | undefined = scan.index;
    if (inner.length === 0) {
      inner = [syntheticArg('echo')];
      offset = undefined;
    }
    const replace =
      scan.values.get('I')?.value ??
      (scan.flags.has('i') ? scan.values.get('i')?.value || '{}' : undefined) ??
      (scan.flags.has('--replace') ? scan.values.get('--replace')?.value || '{}' : undefined);
    if (replace !== undefined && replace !== '') {
      inner = inner.map((a) => (a.value.includes(replace) ? { ...a, isStatic: false } : a));
    }
    f.transparent = true;
    this.invocation(inner, {
      ...info,
      text: inner.map((a) => a.text).join(' '),
      parent: f,
      offsetInParent: offset,
      via: 'xargs',
      openEnded: true,
      issues: [],
    });
  }

  private sudo(f: Finding, args: Arg[], info: InvocationInfo): void {
    const scan = scanOptions(args, 1, {
      short: 'CDghpRrTtUu',
      long: [
        '--close-from',
        '--chdir',
        '--group',
        '--host',
        '--prompt',
        '--chroot',
        '--role',
        '--command-timeout',
        '--type',
        '--other-user',
        '--user',
      ],
      identifierAssignments: true,
    });
    if (['e', 'l', '--edit', '--list'].some((o) => scan.flags.has(o))) return;
    if (!scan.dynamic && scan.index >= args.length && !f.openEnded) {
      for (const a of scan.assignments) {
        const n = a.value.slice(0, a.value.indexOf('='));
        if (isProtectedVariable(n)) f.issues.push(protectedIssue(n));
      }
      if (['s', 'i', '--shell', '--login'].some((o) => scan.flags.has(o)))
        this.shellReadingStdin(f, info, 'sudo -s');
      return;
    }
    this.wrapped(f, args, info, scan);
    f.transparent = false; // running something as another user needs its own allow rule
  }

  private su(f: Finding, args: Arg[], info: InvocationInfo): void {
    // su permutes its options: look for -c anywhere.
    for (let i = 1; i < args.length; i++) {
      const a = args[i]!;
      if (!a.isStatic) {
        f.issues.push(dynamicScript(f.name, `"${a.text}" is only known at run time`));
        return;
      }
      const v = a.value;
      const m = /^--(?:session-)?command=(.*)$/s.exec(v);
      if (m) {
        this.shellString(f, [syntheticArg(m[1]!)], info, `${f.name} -c`);
        f.transparent = false;
        return;
      }
      if (v === '-c' || v === '--command' || v === '--session-command') {
        this.shellString(f, args.slice(i + 1, i + 2), info, `${f.name} -c`);
        f.transparent = false;
        return;
      }
      if (/^-[a-zA-Z]*c/.test(v) && !v.startsWith('--')) {
        const attached = v.slice(v.indexOf('c') + 1);
        this.shellString(
          f,
          attached ? [syntheticArg(attached)] : args.slice(i + 1, i + 2),
          info,
          `${f.name} -c`,
        );
        f.transparent = false;
        return;
      }
      if (
        /^-[a-zA-Z]*[gGsw]$/.test(v) ||
        ['--group', '--supp-group', '--shell', '--whitelist-environment'].includes(v)
      )
        i++;
    }
    // `su -s PROGRAM`, `runuser -u USER COMMAND…`: the program it runs is one of its words.
    this.runner(f, args, info, { everyWord: true });
    this.shellReadingStdin(f, info, f.name);
  }

  private ssh(f: Finding, args: Arg[], info: InvocationInfo): void {
    const table: OptionTable = { short: 'BbcDEeFIiJLlmOoPpQRSWw' };
    let scan = scanOptions(args, 1, table);
    const sensitive = (values: Arg[] | undefined) => {
      for (const v of values ?? []) {
        const key = /^\s*([A-Za-z]+)/.exec(v.value)?.[1]?.toLowerCase() ?? '';
        if (
          !v.isStatic ||
          ['proxycommand', 'localcommand', 'permitlocalcommand', 'knownhostscommand'].includes(key)
        ) {
          f.issues.push({
            rule: 'policy:ssh -o',
            message: `ssh option "${v.text}" runs a local command`,
            waiver: { program: 'ssh', words: ['-o'] },
          });
        }
      }
    };
    sensitive(scan.allValues.get('o'));
    if (scan.dynamic) {
      f.issues.push(dynamicScript('ssh', `"${args[scan.index]?.text ?? ''}" is only known at run time`));
      return;
    }
    const afterHost = scan.index + 1;
    if (afterHost > args.length) return; // no host: nothing runs
    scan = scanOptions(args, afterHost, table);
    sensitive(scan.allValues.get('o'));
    if (scan.dynamic) {
      f.issues.push(dynamicScript('ssh', `"${args[scan.index]?.text ?? ''}" is only known at run time`));
      return;
    }
    const command = args.slice(scan.index);
    if (command.length === 0) {
      if (!scan.flags.has('N') && !f.openEnded) this.shellReadingStdin(f, info, 'ssh');
      return;
    }
    this.shellString(f, command, info, 'ssh');
    f.transparent = false; // reaching another machine needs its own allow rule
  }

  private trap(f: Finding, rest: Arg[], info: InvocationInfo): void {
    let i = 0;
    while (i < rest.length && rest[i]!.isStatic && /^-[lp]+$/.test(rest[i]!.value)) i++;
    if (rest[i]?.isStatic && rest[i]!.value === '--') i++;
    const action = rest[i];
    if (action === undefined || (action.isStatic && action.value === '-')) return;
    f.issues.push({
      rule: 'policy:trap',
      message: '"trap" makes the shell run a command later, when a signal arrives or the shell exits',
    });
    if (action.isStatic && action.value !== '') this.nested(action.value, f, info.ctx, UNKNOWN, 'trap');
  }

  private declaration(f: Finding, rest: Arg[]): void {
    for (const a of rest) {
      const arrayName = a.isStatic ? undefined : variableNameOf(a);
      if (arrayName !== undefined) {
        // `"x[$i]"=v`: the subscript is only known at run time, the variable is not.
        if (isProtectedVariable(arrayName)) f.issues.push(protectedIssue(arrayName));
        continue;
      }
      if (!a.isStatic && !/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(a.text)) {
        f.issues.push({
          rule: 'policy:protected-variable',
          message: `"${f.name} ${a.text}" could assign any variable, such as PATH, since the word is only known at run time`,
        });
        continue;
      }
      const v = a.isStatic ? a.value : a.text;
      if (/^-[a-zA-Z]*n/.test(v)) {
        f.issues.push({
          rule: 'policy:nameref',
          message: `"${f.name} -n" makes a name refer to another variable (which could be PATH)`,
        });
        continue;
      }
      const n = assignedName(v);
      if (n !== undefined && isProtectedVariable(n)) f.issues.push(protectedIssue(n));
    }
  }

  /** `read`/`mapfile` style: options in `withValue` take a value; the rest are variable names. */
  private variableTargets(f: Finding, rest: Arg[], withValue: string, nameOption: string): void {
    for (let i = 0; i < rest.length; i++) {
      const a = rest[i]!;
      if (!a.isStatic) {
        this.checkVariableName(f, a);
        continue;
      }
      const v = a.value;
      if (v.startsWith('-') && v.length > 1) {
        for (let j = 1; j < v.length; j++) {
          const c = v[j]!;
          if (!withValue.includes(c)) continue;
          const attached = v.slice(j + 1);
          const value = attached ? syntheticArg(attached) : rest[++i];
          if (c === nameOption && value !== undefined) this.checkVariableName(f, value);
          break;
        }
        continue;
      }
      this.checkVariableName(f, a);
    }
  }

  private checkVariableName(f: Finding, a: Arg): void {
    const name = variableNameOf(a);
    if (name === undefined) {
      f.issues.push({
        rule: 'policy:protected-variable',
        message: `"${f.name}" would assign a variable named at run time ("${a.text}"), which could be PATH`,
      });
    } else if (isProtectedVariable(name)) {
      f.issues.push(protectedIssue(a.value));
    }
  }

  private shell(f: Finding, args: Arg[], info: InvocationInfo): void {
    let i = 1;
    let cFlag = false;
    let sFlag = false;
    const extra: Arg[] = [];
    while (i < args.length) {
      const a = args[i]!;
      if (!a.isStatic) {
        f.transparent = true;
        f.issues.push(dynamicScript(f.name, `"${a.text}" is only known at run time`));
        return;
      }
      const v = a.value;
      if (v === '--' || v === '-') {
        i++;
        break;
      }
      if (v.startsWith('--')) {
        if (v === '--rcfile' || v === '--init-file') i++;
        else if (v === '--command') cFlag = true;
        else if (v.startsWith('--command=')) {
          this.shellString(f, [syntheticArg(v.slice('--command='.length))], info, `${f.name} -c`);
          return;
        } else if (v === '--init-command') {
          const s = args[i + 1];
          if (s !== undefined) extra.push(s);
          i++;
        } else if (v.startsWith('--init-command='))
          extra.push(syntheticArg(v.slice('--init-command='.length)));
        i++;
        continue;
      }
      if ((v.startsWith('-') || v.startsWith('+')) && v.length > 1) {
        let consume = 0;
        for (const ch of v.slice(1)) {
          if (ch === 'c' && v.startsWith('-')) cFlag = true;
          else if (ch === 's') sFlag = true;
          else if (ch === 'o' || ch === 'O') consume++;
          else if (ch === 'C' && f.name === 'fish') {
            const s = args[i + 1 + consume];
            if (s !== undefined) extra.push(s);
            consume++;
          }
        }
        i += 1 + consume;
        continue;
      }
      break;
    }
    for (const s of extra) this.shellString(f, [s], info, `${f.name} -C`);
    if (cFlag) {
      const script = args[i];
      if (script !== undefined) this.shellString(f, [script], info, `${f.name} -c`);
      else if (f.openEnded) f.issues.push(dynamicScript(f.name, 'the command string comes from its input'));
      return;
    }
    const file = args[i];
    // A script file that is the shell's own input reads it like `bash -s`.
    const fileIsStdin = file !== undefined && STDIN_PATHS.has(file.value);
    if (file !== undefined && !sFlag && !fileIsStdin) return; // runs a script file, like running any program
    if (f.openEnded) {
      f.transparent = true;
      f.issues.push(dynamicScript(f.name, 'its script or file comes from its input at run time'));
      return;
    }
    this.shellReadingStdin(f, info, f.name);
  }

  /** A shell reading its commands from stdin: literal text is checked, a terminal is interactive. */
  private shellReadingStdin(f: Finding, info: InvocationInfo, what: string): void {
    const stdin = resolveStdin(stdinOf(info.redirects, info.ctx));
    if (stdin.kind === 'terminal') return; // interactive: typed input is checked as it is typed
    f.transparent = true;
    if (stdin.kind === 'literal') {
      f.issues.push({
        rule: 'policy:shell-input',
        message: `text fed to ${what} runs as commands that an allow list cannot vouch for; run them directly instead`,
        allowListOnly: true,
      });
      this.fedScript(stdin.text, f, info.ctx, what);
      return;
    }
    f.issues.push(
      dynamicScript(
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
  private fedScript(text: string, f: Finding, ctx: Ctx, what: string): void {
    this.nested(text, f, ctx, UNKNOWN, `text fed to ${what}`);
    if (this.speculative > 0) return;
    if (text.length > MAX_FED_SCRIPT) {
      f.issues.push(
        dynamicScript(
          what,
          `the text fed to it is longer than ${MAX_FED_SCRIPT} characters, too long to check`,
        ),
      );
      return;
    }
    this.speculative++;
    try {
      for (let i = 1; i < text.length; i++) {
        this.nested(
          text.slice(i),
          f,
          ctx,
          UNKNOWN,
          `text fed to ${what}, if its own commands read part of it`,
        );
      }
    } finally {
      this.speculative--;
    }
  }

  /** Words joined with spaces and run by a shell (`bash -c`, `ssh host cmd`, `watch cmd`, `su -c`). */
  private shellString(f: Finding, words: Arg[], info: InvocationInfo, what: string): void {
    f.transparent = true;
    if (words.length === 0) return;
    if (!words.every((w) => w.isStatic)) {
      f.issues.push(dynamicScript(what, 'its command string is only known at run time'));
      return;
    }
    this.nested(words.map((w) => w.value).join(' '), f, info.ctx, UNKNOWN, `in a ${what} string`);
  }

  private git(f: Finding, args: Arg[]): void {
    const sensitive = (word: string, message: string) =>
      f.issues.push({ rule: `policy:git ${word}`, message, waiver: { program: 'git', words: [word] } });
    let i = 1;
    let sub: string | undefined;
    for (; i < args.length; i++) {
      const a = args[i]!;
      if (!a.isStatic) {
        f.issues.push(unverifiable('git', a));
        return;
      }
      const v = a.value;
      if (v === '-c' || (v.startsWith('-c') && !v.startsWith('--'))) {
        sensitive('-c', `"git -c" sets configuration such as aliases, pagers and hooks that run programs`);
        if (v === '-c') i++;
      } else if (v === '--config-env' || v.startsWith('--config-env=')) {
        sensitive('--config-env', '"git --config-env" sets configuration that can run programs');
        if (v === '--config-env') i++;
      } else if (v === '-p' || v === '--paginate') {
        sensitive(v, `"git ${v}" runs the configured pager, which can be any program`);
      } else if (v === '--exec-path' || v.startsWith('--exec-path=')) {
        sensitive('--exec-path', '"git --exec-path" chooses where git finds the programs it runs');
      } else if (GIT_GLOBAL_OPTIONS_WITH_VALUE.has(v)) {
        i++;
      } else if (v.startsWith('-')) {
        // other global options, or --opt=value
      } else {
        sub = v;
        break;
      }
    }
    if (sub === undefined) {
      if (f.openEnded) f.issues.push(unverifiable('git', syntheticArg('(arguments from input)', false)));
      return;
    }
    if (!GIT_BUILTIN_COMMANDS.has(sub)) {
      f.issues.push({
        rule: 'policy:git alias',
        message: `"git ${sub}" is not a built-in git command: an alias or external git-${sub} program can run anything`,
        waiver: { program: 'git', words: [sub] },
      });
    }
    const rest = args.slice(i + 1);
    const positional = rest.filter((a) => a.isStatic && !a.value.startsWith('-'));
    for (const a of rest) {
      if (!a.isStatic) {
        if (GIT_RISKY_SUBCOMMANDS.has(sub)) f.issues.push(unverifiable(`git ${sub}`, a));
        continue;
      }
      const v = a.value;
      const opt = v.includes('=') ? v.slice(0, v.indexOf('=')) : v;
      if (opt === '--output') sensitive('--output', `"git ${sub} --output" writes to a file`);
      else if (opt === '--ext-diff')
        sensitive('--ext-diff', `"git ${sub} --ext-diff" runs an external diff program`);
      else if (opt === '--textconv')
        sensitive('--textconv', `"git ${sub} --textconv" runs a conversion program`);
      else if (opt === '--upload-pack' || opt === '--receive-pack' || opt === '--exec') {
        sensitive(opt, `"git ${sub} ${opt}" runs a program`);
      } else if (sub === 'clone' && v === '-u') sensitive('--upload-pack', '"git clone -u" runs a program');
      else if (sub === 'rebase' && (v === '-x' || v.startsWith('-x')))
        sensitive('--exec', '"git rebase -x" runs a command');
      else if (sub === 'difftool' && (v === '-x' || opt === '--extcmd'))
        sensitive('--extcmd', '"git difftool -x" runs a command');
      else if (sub === 'grep' && (v === '-O' || opt === '--open-files-in-pager')) {
        sensitive('--open-files-in-pager', '"git grep -O" runs a pager program');
      }
    }
    const first = positional[0]?.value;
    if (sub === 'submodule' && first === 'foreach')
      sensitive('foreach', '"git submodule foreach" runs a command');
    if (sub === 'bisect' && first === 'run') sensitive('run', '"git bisect run" runs a command');
    if (sub === 'filter-branch') sensitive('filter-branch', '"git filter-branch" runs filter commands');
    if (sub === 'config' && isGitConfigWrite(rest)) {
      sensitive('config', '"git config" that sets a value can define aliases, pagers and hooks');
    }
  }

  private find(f: Finding, args: Arg[], info: InvocationInfo): void {
    let expectValue = false;
    for (let i = 1; i < args.length; i++) {
      const a = args[i]!;
      if (!a.isStatic) {
        if (!expectValue) f.issues.push(unverifiable('find', a));
        expectValue = false;
        continue;
      }
      const v = a.value;
      if (expectValue) {
        expectValue = false;
        continue;
      }
      if (FIND_SENSITIVE_PRIMARIES.has(v)) {
        f.issues.push({
          rule: `policy:find ${v}`,
          message:
            v === '-delete'
              ? '"find -delete" deletes files'
              : v.startsWith('-fprint') || v === '-fls'
                ? `"find ${v}" writes to a file`
                : `"find ${v}" runs a command for each file`,
          waiver: { program: 'find', words: [v] },
        });
        if (v.startsWith('-exec') || v.startsWith('-ok')) {
          let j = i + 1;
          const inner: Arg[] = [];
          let plus = false;
          for (; j < args.length; j++) {
            const w = args[j]!;
            if (w.isStatic && w.value === ';') break;
            if (w.isStatic && w.value === '+' && inner.at(-1)?.value === '{}') {
              plus = true;
              break;
            }
            inner.push(w.value.includes('{}') ? { ...w, isStatic: false } : w);
          }
          if (inner.length > 0) {
            this.invocation(inner, {
              ...info,
              text: inner.map((w) => w.text).join(' '),
              parent: f,
              offsetInParent: undefined,
              via: `find ${v}`,
              openEnded: plus,
              issues: [],
            });
          }
          i = j;
        } else if (v === '-fprint' || v === '-fprint0' || v === '-fls') expectValue = true;
        else if (v === '-fprintf') i++; // file, then format
        continue;
      }
      if (FIND_PRIMARIES_WITH_VALUE.has(v) || /^-newer[a-zA-Z]{2}$/.test(v)) expectValue = true;
    }
    if (f.openEnded) f.issues.push(unverifiable('find', syntheticArg('(arguments from input)', false)));
  }

  private sensitiveWords(f: Finding, args: Arg[], program: string, table: [string, RegExp?][]): void {
    for (const a of args.slice(1)) {
      if (!a.isStatic) continue;
      for (const [word, re] of table) {
        const hit = re
          ? re.test(a.value)
          : a.value === word ||
            a.value.startsWith(`${word}=`) ||
            (word.length === 2 && a.value.startsWith(word));
        if (hit) {
          f.issues.push({
            rule: `policy:${program} ${word}`,
            message: `"${program} ${word}" runs a program`,
            waiver: { program, words: [word] },
          });
        }
      }
    }
  }
}

function isGitConfigWrite(rest: readonly Arg[]): boolean {
  const write = new Set([
    'set',
    'unset',
    'edit',
    'rename-section',
    'remove-section',
    '--add',
    '--replace-all',
    '--unset',
    '--unset-all',
    '--edit',
    '-e',
    '--rename-section',
    '--remove-section',
  ]);
  const readOnly = new Set([
    'get',
    'list',
    '-l',
    '--list',
    '--get',
    '--get-all',
    '--get-regexp',
    '--get-urlmatch',
  ]);
  let positional = 0;
  const withValue = new Set(['--file', '-f', '--blob', '--type', '--default', '--comment', '--value']);
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (!a.isStatic) return true;
    if (write.has(a.value)) return true;
    if (readOnly.has(a.value)) return false;
    if (withValue.has(a.value)) {
      i++;
      continue;
    }
    if (!a.value.startsWith('-')) positional++;
  }
  return positional >= 2;
}

interface OptionTable {
  /** Short option letters that take a value (attached or the next word). */
  readonly short?: string;
  /** Short option letters with an optional attached value. */
  readonly optionalShort?: string;
  /** Long options that take the next word as a value when written without `=`. */
  readonly long?: readonly string[];
  /** `NAME=value` words (any name, as env accepts) before the command are assignments. */
  readonly env?: boolean;
  /** `NAME=value` words with an identifier name before the command are assignments (sudo). */
  readonly identifierAssignments?: boolean;
}

interface Scan {
  /** Index of the first word after the options: the command. */
  index: number;
  /** True when a non-static word was met where an option or the command could be. */
  readonly dynamic: boolean;
  readonly flags: Set<string>;
  readonly values: Map<string, Arg>;
  readonly allValues: Map<string, Arg[]>;
  readonly assignments: Arg[];
}

/** Scans the options of a wrapper (getopt style, stopping at the first operand). */
function scanOptions(args: readonly Arg[], start: number, table: OptionTable): Scan {
  const flags = new Set<string>();
  const values = new Map<string, Arg>();
  const allValues = new Map<string, Arg[]>();
  const assignments: Arg[] = [];
  const record = (key: string, value: Arg | undefined) => {
    if (value === undefined) return;
    values.set(key, value);
    allValues.set(key, [...(allValues.get(key) ?? []), value]);
  };
  let i = start;
  while (i < args.length) {
    const a = args[i]!;
    if (!a.isStatic) return { index: i, dynamic: true, flags, values, allValues, assignments };
    const v = a.value;
    if (v === '--') {
      i++;
      break;
    }
    if (v.startsWith('--') && v.length > 2) {
      const eq = v.indexOf('=');
      const name = eq >= 0 ? v.slice(0, eq) : v;
      flags.add(name);
      if (eq >= 0) record(name, syntheticArg(v.slice(eq + 1)));
      else if (table.long?.includes(name)) {
        record(name, args[i + 1]);
        i++;
      }
      i++;
      continue;
    }
    if (v === '-' && table.env) {
      flags.add('i');
      i++;
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      for (let j = 1; j < v.length; j++) {
        const c = v[j]!;
        flags.add(c);
        if (table.short?.includes(c)) {
          const attached = v.slice(j + 1);
          if (attached) record(c, syntheticArg(attached));
          else {
            record(c, args[i + 1]);
            i++;
          }
          break;
        }
        if (table.optionalShort?.includes(c)) {
          record(c, syntheticArg(v.slice(j + 1)));
          break;
        }
      }
      i++;
      continue;
    }
    if (
      (table.env && /^[^=]+=/.test(v)) ||
      (table.identifierAssignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(v))
    ) {
      assignments.push(a);
      i++;
      continue;
    }
    break;
  }
  return { index: i, dynamic: false, flags, values, allValues, assignments };
}

/** Splits an `env -S` string into words (quotes and backslashes as env does); undefined if it expands. */
function splitEnvString(s: string): string[] | undefined {
  if (/\$/.test(s)) return undefined;
  const ast = parse(s);
  if (ast.errors !== undefined && ast.errors.length > 0) return undefined;
  const stmt = ast.commands[0];
  if (ast.commands.length !== 1 || stmt === undefined || stmt.command.type !== 'Command') return undefined;
  const cmd = stmt.command;
  if (cmd.redirects.length > 0) return undefined;
  const words: Arg[] = [];
  for (const p of cmd.prefix) if (p.type === 'Assignment') words.push(assignmentToArg(p));
  if (cmd.name) words.push(wordToArg(cmd.name));
  for (const s2 of cmd.suffix) {
    if (s2.type === 'Word') words.push(wordToArg(s2));
    else if (s2.type === 'Assignment') words.push(assignmentToArg(s2));
  }
  if (!words.every((w) => w.isStatic)) return undefined;
  return words.map((w) => w.value);
}

function isStdinRedirect(r: Redirection): boolean {
  const fd = r.descriptor?.type === 'FileDescriptor' ? r.descriptor.value : r.descriptor ? -1 : undefined;
  if (fd !== undefined) return fd === 0 || fd === -1;
  if (r.type === 'HereString' || r.type === 'HereDoc') return true;
  return r.operator === '<' || r.operator === '<&' || r.operator === '<>';
}

/** The stdin of a command with these redirections, in this context (the last redirection of fd 0 wins). */
function stdinOf(redirects: readonly Redirection[], ctx: Ctx): Stdin {
  let stdin: Stdin = ctx.stdin;
  for (const r of redirects) {
    if (!isStdinRedirect(r)) continue;
    if (r.type === 'HereString') {
      const t = r.target;
      stdin = t !== undefined && wordToArg(t).isStatic ? { kind: 'literal', text: `${t.value}\n` } : UNKNOWN;
    } else if (r.type === 'HereDoc') {
      const body = hereDocText(r);
      stdin = body === undefined ? UNKNOWN : { kind: 'literal', text: body };
    } else if (r.operator === '<&' && r.target?.value === '-') {
      stdin = { kind: 'literal', text: '' };
    } else {
      stdin = UNKNOWN;
    }
  }
  return stdin;
}

/** Turns a pipe from a literal `echo`/`printf`/`cat <<EOF` into its text; any other pipe is unknown. */
function resolveStdin(stdin: Stdin): Stdin {
  if (stdin.kind !== 'pipe') return stdin;
  const from = stdin.from;
  if (from.type !== 'Command' || from.name === undefined) return UNKNOWN;
  const nameArg = wordToArg(from.name);
  if (!nameArg.isStatic) return UNKNOWN;
  const name = normaliseName(nameArg.value).name;
  const args: Arg[] = [];
  for (const s of from.suffix) {
    if (s.type === 'Word') args.push(wordToArg(s));
    else if (s.type === 'Assignment') args.push(assignmentToArg(s));
  }
  let text: string | undefined;
  if (name === 'echo') text = echoOutput(args);
  else if (name === 'printf') text = printfOutput(args);
  else if (name === 'cat' && args.length === 0) {
    const own = stdinOf(from.redirects, {
      source: '',
      depth: 0,
      stdin: UNKNOWN,
      parent: undefined,
      via: undefined,
    });
    if (own.kind === 'literal') text = own.text;
  }
  return text === undefined ? UNKNOWN : { kind: 'literal', text };
}

function protectedIssue(name: string): Issue {
  return {
    rule: 'policy:protected-variable',
    message: `assigning ${name} changes what later commands or the programs they start do`,
  };
}

/** A word only known at run time whose quoted text holds substitution syntax inside a subscript. */
function holdsHiddenSubscriptSyntax(word: Word): boolean {
  return !isStaticWord(word) && hidesSubstitution(word.parts) && word.text.includes('[');
}

/** How a command found in arithmetic text is run, for explanations. */
const ARITHMETIC_VIA = 'in text bash evaluates arithmetically';

/** Why a command found in arithmetic text counts: denied with it. */
function arithmeticIssue(display: string): Issue {
  return {
    rule: 'policy:arithmetic-injection',
    message: `bash evaluates "${display.slice(0, 60)}" arithmetically, where quotes do not stop the substitutions in it from running`,
    onlyWhenInnerDenied: true,
  };
}

/** Arithmetic text whose substitutions cannot be checked: denied under any rule. */
function uncheckableArithmetic(display: string, why: string): Issue {
  return {
    rule: 'policy:arithmetic-injection',
    message: `bash evaluates "${display.slice(0, 60)}" arithmetically, where quotes do not stop substitutions from running, and they cannot be checked: ${why}`,
  };
}

/** Paths through which a program reads its own standard input as a file. */
const STDIN_PATHS: ReadonlySet<string> = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);

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
function fileRedirectIssue(node: { operator: string; target: Word | undefined }): Issue | undefined {
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

function dynamicScript(what: string, why: string): Issue {
  return { rule: 'policy:dynamic-script', message: `"${what}" runs commands that cannot be checked: ${why}` };
}

function unverifiable(what: string, a: Arg): Issue {
  return {
    rule: 'policy:unverifiable-arguments',
    message: `"${what}" has an argument only known at run time ("${a.text}"), which could be an option that runs a program`,
  };
}

/** True when the text ends with a backslash-newline (or a backslash) that continues the line. */
function endsWithContinuation(source: string): boolean {
  const s = source.endsWith('\n') ? source.slice(0, -1) : source;
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/**
 * The offset of the first `!` that an interactive bash would history-expand (outside single quotes,
 * not followed by a blank, `=`, `(` or the end), or -1.
 */
function findHistoryExpansion(source: string): number {
  let single = false;
  let double = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (single) {
      if (c === "'") single = false;
      continue;
    }
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === "'" && !double) {
      single = true;
      continue;
    }
    if (c === '"') {
      double = !double;
      continue;
    }
    if (c === '!') {
      const next = source[i + 1];
      if (
        next === undefined ||
        next === ' ' ||
        next === '\t' ||
        next === '\n' ||
        next === '=' ||
        next === '('
      )
        continue;
      if (double && next === '"') continue;
      return i;
    }
  }
  return -1;
}
