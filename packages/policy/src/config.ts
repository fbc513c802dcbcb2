import { readFileSync } from 'node:fs';
import { ConchError, ErrorCode } from '@conch/core';
import { z } from 'zod';
import type { Rule } from './rules.js';

/** The policy configuration: allow and deny lists of rules. Empty lists (no rules at all) mean "policy off". */
export interface PolicyConfig {
  /** With at least one allow rule, every command must match one. */
  readonly allow: readonly Rule[];
  /** A command matching a deny rule is denied, whatever the allow rules say. */
  readonly deny: readonly Rule[];
}

/** No rules: the policy is off and every command is allowed. */
export const EMPTY_POLICY_CONFIG: PolicyConfig = Object.freeze({ allow: [], deny: [] });

/** The zod schema of a {@link Rule}. */
export const RuleSchema = z.union([
  z.string().trim().min(1, 'a rule must not be empty'),
  z.strictObject({
    prefix: z.string().trim().min(1, 'a rule must not be empty'),
    match: z.array(z.string()).optional(),
    not_match: z.array(z.string()).optional(),
  }),
]);

/** The zod schema of a {@link PolicyConfig} (`allow` and `deny` default to empty lists). */
export const PolicyConfigSchema = z.strictObject({
  allow: z.array(RuleSchema).default([]),
  deny: z.array(RuleSchema).default([]),
});

const ConchConfigSchema = z.looseObject({ policy: PolicyConfigSchema.optional() });

const StringList = z.array(z.string());
const GeminiSettingsSchema = z.looseObject({
  tools: z.looseObject({ core: StringList.optional(), exclude: StringList.optional() }).optional(),
  coreTools: StringList.optional(),
  excludeTools: StringList.optional(),
});

function invalid(source: string, error: z.ZodError): ConchError {
  return new ConchError(
    ErrorCode.INVALID_ARGUMENT,
    `Invalid policy configuration in ${source}:\n${z.prettifyError(error)}`,
    {
      hint: 'A policy is { "allow": [RULE…], "deny": [RULE…] }; a rule is a command prefix such as "git push" or { "prefix": "git push", "match": [...], "not_match": [...] }.',
      data: { source },
    },
  );
}

/**
 * Validates a `{ allow, deny }` object. Throws a `ConchError` (`INVALID_ARGUMENT`) that names `source`
 * and what is wrong.
 */
export function parsePolicyConfig(value: unknown, source = 'the policy configuration'): PolicyConfig {
  const r = PolicyConfigSchema.safeParse(value);
  if (!r.success) throw invalid(source, r.error);
  return r.data;
}

/** The policy of repeatable `--allow PREFIX` / `--deny PREFIX` command-line flags. */
export function policyConfigFromFlags(flags: {
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
}): PolicyConfig {
  return parsePolicyConfig(
    { allow: [...(flags.allow ?? [])], deny: [...(flags.deny ?? [])] },
    'the --allow/--deny flags',
  );
}

/**
 * The policy of a parsed `conch.config.json`: `{ "policy": { "allow": [...], "deny": [...] } }` (other
 * top-level keys are left to their owners). No `policy` key gives no rules.
 */
export function policyConfigFromConchConfig(json: unknown, source = 'conch.config.json'): PolicyConfig {
  const r = ConchConfigSchema.safeParse(json);
  if (!r.success) throw invalid(source, r.error);
  return r.data.policy ?? EMPTY_POLICY_CONFIG;
}

const SHELL_TOOL = /^\s*(?:run_shell_command|ShellTool)\s*(?:\((.*)\))?\s*$/s;

/**
 * The policy of Gemini CLI / Ollama Code settings: `tools.core` entries `run_shell_command(PREFIX)` are allow
 * rules and `tools.exclude` entries are deny rules (also the older top-level `coreTools`/`excludeTools`).
 * Entries for other tools are ignored. A bare `run_shell_command` in `core` allows every command (`"*"`);
 * in `exclude` it denies every command.
 */
export function policyConfigFromGeminiSettings(json: unknown, source = 'settings.json'): PolicyConfig {
  const r = GeminiSettingsSchema.safeParse(json);
  if (!r.success) throw invalid(source, r.error);
  const core = [...(r.data.tools?.core ?? []), ...(r.data.coreTools ?? [])];
  const exclude = [...(r.data.tools?.exclude ?? []), ...(r.data.excludeTools ?? [])];
  const rules = (entries: string[]): string[] => {
    const out: string[] = [];
    for (const e of entries) {
      const m = SHELL_TOOL.exec(e);
      if (!m) continue;
      const inner = m[1]?.trim() ?? '';
      out.push(inner === '' ? '*' : inner);
    }
    return out.includes('*') ? ['*'] : out;
  };
  return parsePolicyConfig({ allow: rules(core), deny: rules(exclude) }, source);
}

/**
 * Reads a JSON file and returns its policy: a `conch.config.json` (with a `policy` key) or Gemini/Ollama
 * settings (with `tools.core`/`tools.exclude`). Throws a `ConchError` (`INVALID_ARGUMENT`) naming the file
 * when it cannot be read or parsed.
 */
export function loadPolicyConfigFile(path: string): PolicyConfig {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `Cannot read the policy configuration ${path}: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e, data: { path } },
    );
  }
  if (typeof json === 'object' && json !== null) {
    const o = json as Record<string, unknown>;
    if ('policy' in o) return policyConfigFromConchConfig(json, path);
    if ('tools' in o || 'coreTools' in o || 'excludeTools' in o)
      return policyConfigFromGeminiSettings(json, path);
    if ('allow' in o || 'deny' in o) return parsePolicyConfig(json, path);
  }
  return EMPTY_POLICY_CONFIG;
}

function ruleKey(rule: Rule): string {
  return typeof rule === 'string' ? rule.trim() : JSON.stringify(rule);
}

/** Combines several sources (flags, config file, settings): the union of their allow and deny rules. */
export function mergePolicyConfigs(...configs: readonly PolicyConfig[]): PolicyConfig {
  const allow = new Map<string, Rule>();
  const deny = new Map<string, Rule>();
  for (const c of configs) {
    for (const r of c.allow) allow.set(ruleKey(r), r);
    for (const r of c.deny) deny.set(ruleKey(r), r);
  }
  return { allow: [...allow.values()], deny: [...deny.values()] };
}
