import {
  type CommandPolicy,
  ConchError,
  type PolicyCommandVerdict as CorePolicyCommandVerdict,
  type PolicyDecision as CorePolicyDecision,
  ErrorCode,
  hint,
  verb,
} from '@conch/core';
import { analyseCommand } from './analyse.js';
import { type PolicyConfig, parsePolicyConfig } from './config.js';
import type { Finding } from './finding.js';
import { DEFAULT_MAX_INPUT_BYTES, gateInput } from './gate.js';
import {
  allowRuleMatches,
  allowRuleNames,
  type CompiledRule,
  compileRule,
  denyRuleMatches,
} from './rules.js';

/**
 * The verdict on one simple command found in the input (docs/policy.md): its text as written, its normalised argv
 * (name with quotes removed and system path stripped, wrappers kept), the decision and the rule that decided
 * (`"deny rm"`, `"allow git"`, or a built-in rule such as `"policy:function-definition"`).
 */
export type PolicyCommandVerdict = CorePolicyCommandVerdict;

/** The decision for a whole input (docs/policy.md): `{ decision, reason, commands: [{ text, argv, decision, rule? }] }`. */
export type PolicyDecision = CorePolicyDecision;

/** Options of a {@link Policy}. */
export interface PolicyOptions {
  /** Size cap of the raw-text gate, in UTF-8 bytes. Default 64 KiB. */
  readonly maxInputBytes?: number;
  /** How deep strings run as commands may nest (`bash -c "eval '…'"`). Default 8. */
  readonly maxDepth?: number;
  /**
   * Deny `!` history expansion (`!!`, `!-2`, `!$`), which an interactive bash applies before parsing.
   * Default true; set false only if the session shells run with `set +H`.
   */
  readonly historyExpansion?: boolean;
}

/** Options of one evaluation. */
export interface EvaluateOptions {
  /** The text is typed into an interactive shell (`respond`): TAB, which completes words, is refused too. */
  readonly typed?: boolean;
  /**
   * Overrides the policy's `historyExpansion` for this call: false when the text cannot be history-expanded
   * (conch's `execute` types `!` as `\x21`), true for text typed raw into an interactive bash.
   */
  readonly historyExpansion?: boolean;
}

interface Judged {
  readonly decision: 'allow' | 'deny';
  readonly rule: string | undefined;
  /** Why it was denied, for the reason line. */
  readonly why: string | undefined;
}

const MAX_REASONS = 3;

/**
 * A command policy compiled once from a {@link PolicyConfig}: rules parsed, examples checked. Implements
 * the core's `CommandPolicy`. `evaluate` is pure and fast (tens of microseconds for a typical command).
 *
 * ```ts
 * const policy = new Policy(mergePolicyConfigs(policyConfigFromFlags({ deny: ['rm'] }), loadPolicyConfigFile(path)));
 * policy.evaluate('git status && rm -rf build'); // { decision: 'deny', reason: …, commands: [...] }
 * ```
 */
export class Policy implements CommandPolicy {
  /** The validated configuration. */
  readonly config: PolicyConfig;
  /** The compiled allow rules. */
  readonly allowRules: readonly CompiledRule[];
  /** The compiled deny rules. */
  readonly denyRules: readonly CompiledRule[];
  /** True when any rule is configured; with no rules the policy is off and allows everything. */
  readonly active: boolean;
  private readonly options: Required<PolicyOptions>;

  /**
   * Validates and compiles `config` (anything shaped `{ allow?, deny? }`) and checks every rule's
   * `match`/`not_match` examples. Throws a `ConchError` (`INVALID_ARGUMENT`) naming the rule and the
   * example that fails, so a bad configuration stops the server at start-up.
   */
  constructor(config: PolicyConfig | unknown, options: PolicyOptions = {}) {
    this.config = parsePolicyConfig(config);
    this.options = {
      maxInputBytes: options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
      maxDepth: options.maxDepth ?? 8,
      historyExpansion: options.historyExpansion ?? true,
    };
    this.allowRules = this.config.allow.map((r) => compileRule(r, 'allow'));
    this.denyRules = this.config.deny.map((r) => compileRule(r, 'deny'));
    this.active = this.allowRules.length + this.denyRules.length > 0;
    for (const rule of [...this.allowRules, ...this.denyRules]) this.checkExamples(rule);
  }

  /** Decides whether `command` may run, and explains the decision per simple command. Never throws. */
  evaluate(command: string, options: EvaluateOptions = {}): PolicyDecision {
    const gate = gateInput(command, { maxBytes: this.options.maxInputBytes, typed: options.typed === true });
    if (gate !== undefined) {
      const decision = this.active ? 'deny' : 'allow';
      return {
        decision,
        reason: this.active
          ? `Denied: ${gate.message}.`
          : `No policy rules are configured, so it is allowed (with rules it would be denied: ${gate.message}).`,
        commands: [{ text: command.slice(0, 200), argv: [], decision, rule: gate.rule }],
      };
    }
    const findings = analyseCommand(command, {
      maxDepth: this.options.maxDepth,
      historyExpansion: options.historyExpansion ?? this.options.historyExpansion,
    });
    return this.decide(findings);
  }

  /**
   * Like {@link Policy.evaluate}, but throws the `POLICY_DENIED` `ConchError` (naming the rule and the
   * sub-command) when the command is denied; returns the decision otherwise.
   */
  assertAllowed(command: string, options: EvaluateOptions = {}): PolicyDecision {
    const decision = this.evaluate(command, options);
    if (decision.decision === 'deny') throw policyDeniedError(decision);
    return decision;
  }

  private decide(findings: readonly Finding[]): PolicyDecision {
    const allowMatch = new Map<Finding, CompiledRule>();
    const commands: PolicyCommandVerdict[] = [];
    const denials: string[] = [];
    const listed = new Set<string>();
    const judged = findings.map((f) => this.judge(f, allowMatch));
    this.denyWithInner(findings, judged);
    for (let i = 0; i < findings.length; i++) {
      const f = findings[i]!;
      const j = judged[i]!;
      const verdict: PolicyCommandVerdict = { text: f.text, argv: argvOf(f), decision: j.decision };
      if (j.rule !== undefined) verdict.rule = j.rule;
      const key = `${verdict.text}\0${verdict.rule ?? ''}`;
      // Suffixes of a script fed to a shell are listed only when they add a denial.
      if (f.speculative && (j.decision === 'allow' || listed.has(key))) continue;
      listed.add(key);
      commands.push(verdict);
      if (j.decision === 'deny' && j.why !== undefined) denials.push(j.why);
    }
    const n = commands.length;
    const counted = `${n} command${n === 1 ? '' : 's'}`;
    if (!this.active) {
      return {
        decision: 'allow',
        reason: `No policy rules are configured, so every command is allowed (${counted} found).`,
        commands,
      };
    }
    if (denials.length > 0) {
      const shown = denials.slice(0, MAX_REASONS).join('; ');
      const more = denials.length > MAX_REASONS ? `; and ${denials.length - MAX_REASONS} more` : '';
      return { decision: 'deny', reason: `Denied: ${shown}${more}.`, commands };
    }
    const how =
      this.allowRules.length > 0
        ? 'each matches an allow rule and none a deny rule'
        : 'none matches a deny rule';
    return {
      decision: 'allow',
      reason: n === 0 ? 'Allowed: the input contains no command.' : `Allowed: ${counted} checked; ${how}.`,
      commands,
    };
  }

  /**
   * Denies the constructs whose issue holds only when a command found inside them is denied (quoted text
   * that bash evaluates arithmetically), when one is.
   */
  private denyWithInner(findings: readonly Finding[], judged: Judged[]): void {
    const withDeniedInner = new Set<Finding>();
    findings.forEach((f, i) => {
      if (judged[i]!.decision !== 'deny') return;
      for (let p = f.parent; p !== undefined && !withDeniedInner.has(p); p = p.parent) withDeniedInner.add(p);
    });
    findings.forEach((f, i) => {
      if (judged[i]!.decision === 'deny' || !withDeniedInner.has(f)) return;
      const issue = f.issues.find((x) => x.onlyWhenInnerDenied === true);
      if (issue !== undefined) {
        judged[i] = { decision: 'deny', rule: issue.rule, why: `${describeFinding(f)}: ${issue.message}` };
      }
    });
  }

  private judge(f: Finding, allowMatch: Map<Finding, CompiledRule>): Judged {
    if (!this.active) return { decision: 'allow', rule: undefined, why: undefined };
    const where = describeFinding(f);
    for (const issue of f.issues) {
      if (issue.onlyWhenInnerDenied === true) continue;
      if (issue.allowListOnly === true && this.allowRules.length === 0) continue;
      const waived =
        issue.waiver !== undefined &&
        this.allowRules.some((r) => allowRuleNames(r, issue.waiver!.program, issue.waiver!.words));
      if (!waived) return { decision: 'deny', rule: issue.rule, why: `${where}: ${issue.message}` };
    }
    for (const rule of this.denyRules) {
      if (denyRuleMatches(rule, f)) {
        return { decision: 'deny', rule: rule.label, why: `${where} matches the deny rule "${rule.prefix}"` };
      }
    }
    if (!f.runsProgram || this.allowRules.length === 0)
      return { decision: 'allow', rule: undefined, why: undefined };
    const own = this.allowRules.find((r) => allowRuleMatches(r, f));
    if (own !== undefined) {
      allowMatch.set(f, own);
      return { decision: 'allow', rule: own.label, why: undefined };
    }
    const covering = coveringRule(f, allowMatch);
    if (covering !== undefined) return { decision: 'allow', rule: covering.label, why: undefined };
    // A speculative finding only ever adds denials by deny rules and built-in checks.
    if (f.transparent || f.speculative) return { decision: 'allow', rule: undefined, why: undefined };
    const allowed = this.allowRules.map((r) => r.prefix).join(', ');
    return {
      decision: 'deny',
      rule: 'policy:no-allow-rule',
      why: `${where} matches no allow rule (allowed: ${allowed})`,
    };
  }

  private checkExamples(rule: CompiledRule): void {
    if (rule.match.length === 0 && rule.notMatch.length === 0) return;
    const alone = new Policy(
      rule.kind === 'allow' ? { allow: [rule.prefix] } : { deny: [rule.prefix] },
      this.options,
    );
    const matches = (example: string): { hit: boolean; reason: string } => {
      const d = alone.evaluate(example);
      if (rule.kind === 'allow') return { hit: d.decision === 'allow', reason: d.reason };
      return { hit: d.commands.some((c) => c.rule === rule.label), reason: d.reason };
    };
    const fail = (example: string, list: string, reason: string) =>
      new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Policy ${rule.kind} rule "${rule.prefix}": the example "${example}" in ${list} fails. ${reason}`,
        {
          hint: `Fix the rule or its example in the policy configuration (${rule.kind} rule "${rule.prefix}").`,
          data: { rule: rule.prefix, kind: rule.kind, example, list },
        },
      );
    for (const example of rule.match) {
      const m = matches(example);
      if (!m.hit) {
        throw fail(
          example,
          'match',
          rule.kind === 'allow'
            ? `The rule alone does not allow it: ${m.reason}`
            : 'The rule does not match any command in it.',
        );
      }
    }
    for (const example of rule.notMatch) {
      const m = matches(example);
      if (m.hit) {
        throw fail(
          example,
          'not_match',
          rule.kind === 'allow' ? 'The rule alone allows it.' : 'The rule matches a command in it.',
        );
      }
    }
  }
}

/** Compiles a policy (same as `new Policy(config, options)`). */
export function createPolicy(config: PolicyConfig | unknown, options: PolicyOptions = {}): Policy {
  return new Policy(config, options);
}

/**
 * Evaluates `command` against `policy` (a compiled {@link Policy}, or a configuration compiled on the spot:
 * compile once with `new Policy()` when evaluating many commands).
 */
export function evaluate(
  command: string,
  policy: Policy | PolicyConfig,
  options: EvaluateOptions = {},
): PolicyDecision {
  const compiled = policy instanceof Policy ? policy : new Policy(policy);
  return compiled.evaluate(command, options);
}

/**
 * The `POLICY_DENIED` error for a denied decision (docs/tools.md): the message names the sub-command and the rule;
 * `data` carries `command`, `rule` and the whole `decision`.
 */
export function policyDeniedError(decision: PolicyDecision): ConchError {
  const denied = decision.commands.find((c) => c.decision === 'deny');
  return new ConchError(
    ErrorCode.POLICY_DENIED,
    `Denied by policy: ${decision.reason.replace(/^Denied: /, '')}`,
    {
      hint: hint`Nothing was run. ${verb('checkCommand')} explains the decision per sub-command.`,
      data: { command: denied?.text ?? null, rule: denied?.rule ?? null, decision },
    },
  );
}

function argvOf(f: Finding): string[] {
  return f.args.map((a, i) =>
    i === 0 && a.isStatic && f.runsProgram ? f.allowName : a.isStatic ? a.value : a.text,
  );
}

function describeFinding(f: Finding): string {
  const text = f.runsProgram ? f.args.map((a) => a.text).join(' ') : f.text;
  const short = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return f.via === undefined ? `"${short}"` : `"${short}" (${viaText(f.via)})`;
}

function viaText(via: string): string {
  if (via.startsWith('in ') || via.startsWith('text fed')) return via;
  if (via === 'eval' || via === 'trap') return `in an ${via} string`;
  return `run by ${via}`;
}

/** An allow rule matched by a wrapper that reaches this finding's name (e.g. `timeout 5 make`). */
function coveringRule(f: Finding, allowMatch: Map<Finding, CompiledRule>): CompiledRule | undefined {
  let cur: Finding = f;
  let offset = 0;
  while (cur.parent !== undefined && cur.offsetInParent !== undefined) {
    offset += cur.offsetInParent;
    cur = cur.parent;
    const m = allowMatch.get(cur);
    if (m !== undefined && !m.all && m.words.length > offset) return m;
  }
  return undefined;
}
