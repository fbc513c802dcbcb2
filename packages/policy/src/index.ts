/**
 * `@conch/policy`: the command policy of conch (SPEC §6). A raw-text gate, a real bash parse (unbash),
 * normalised and unwrapped command names, built-in checks for state-changing constructs and interpreters in
 * disguise, word-prefix allow/deny rules, configuration loaders and an audit log.
 *
 * A guardrail for agents, not a sandbox: see docs/policy.md.
 */

export {
  Policy,
  createPolicy,
  evaluate,
  policyDeniedError,
  type EvaluateOptions,
  type PolicyCommandVerdict,
  type PolicyDecision,
  type PolicyOptions,
} from './policy.js';
export {
  EMPTY_POLICY_CONFIG,
  PolicyConfigSchema,
  RuleSchema,
  loadPolicyConfigFile,
  mergePolicyConfigs,
  parsePolicyConfig,
  policyConfigFromConchConfig,
  policyConfigFromFlags,
  policyConfigFromGeminiSettings,
  type PolicyConfig,
} from './config.js';
export { compileRule, type CompiledRule, type Rule, type RuleWithExamples } from './rules.js';
export { DEFAULT_MAX_INPUT_BYTES, gateInput, type GateFailure, type GateOptions } from './gate.js';
export { analyseCommand, normaliseName, type AnalyseOptions, type Finding, type Issue } from './analyse.js';
export { type Arg } from './words.js';
export {
  PROTECTED_VARIABLES,
  SHELL_PROGRAMS,
  isInterpreterProgram,
  isProtectedVariable,
  isShellProgram,
} from './programs.js';
export { createAuditLog, type AuditLog, type AuditRecord } from './audit.js';
