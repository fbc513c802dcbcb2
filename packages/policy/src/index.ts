/**
 * `@conch/policy`: the command policy of conch (docs/policy.md). A raw-text gate, a real bash parse (unbash),
 * normalised and unwrapped command names, built-in checks for state-changing constructs and interpreters in
 * disguise, word-prefix allow/deny rules, configuration loaders and an audit log.
 *
 * A guardrail for agents, not a sandbox: see docs/policy.md.
 */

export { type AnalyseOptions, analyseCommand } from './analyse.js';
export { type AuditLog, type AuditRecord, createAuditLog } from './audit.js';
export {
  EMPTY_POLICY_CONFIG,
  loadPolicyConfigFile,
  mergePolicyConfigs,
  type PolicyConfig,
  PolicyConfigSchema,
  parsePolicyConfig,
  policyConfigFromConchConfig,
  policyConfigFromFlags,
  policyConfigFromGeminiSettings,
  RuleSchema,
} from './config.js';
export type { Finding, Issue } from './finding.js';
export { DEFAULT_MAX_INPUT_BYTES, type GateFailure, type GateOptions, gateInput } from './gate.js';
export { normaliseName } from './names.js';
export {
  createPolicy,
  type EvaluateOptions,
  evaluate,
  Policy,
  type PolicyCommandVerdict,
  type PolicyDecision,
  type PolicyOptions,
  policyDeniedError,
} from './policy.js';
export {
  COMMAND_RUNNERS,
  type CommandRunner,
  isInterpreterProgram,
  isProtectedVariable,
  isShellProgram,
  PROTECTED_VARIABLES,
} from './programs.js';
export { HARMLESS_REDIRECT_TARGETS, REDIRECT_RULE } from './redirects.js';
export { type CompiledRule, compileRule, type Rule, type RuleWithExamples } from './rules.js';
export { MAX_NESTING } from './text-checks.js';
export type { Arg } from './words.js';
