/**
 * The rules of the operations' parameters: type, unit, range and default of each, defined once. Ranges
 * and defaults that the operator configures are functions of the engine's {@link EngineLimits} and
 * {@link EngineDefaults}. The engine applies and checks them with {@link resolveParameter}; the faces
 * derive their schemas and options from the same entries (`@conch/service` adds the descriptions), so no
 * range or default is written twice.
 */

import { ConchError, ErrorCode } from '../errors.js';
import type { EngineDefaults, EngineLimits } from './limits.js';
import { USER_PATTERN_MAX_CHARS } from './user-pattern-limits.js';

/** What the configurable ranges and defaults depend on: an engine's limits and defaults. */
export interface ParameterContext {
  readonly limits: EngineLimits;
  readonly defaults: EngineDefaults;
}

/** A value, or a function of the engine's configuration that gives it. */
export type Configured<T> = T | ((context: ParameterContext) => T);

/** The JSON types of parameters. */
export type ParameterType =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'enum'
  /** One key name or a list of them. */
  | 'keys'
  /** An object of string values (environment variables). */
  | 'string_map'
  /** `true`, `false`, or sandbox rules `{write?, deny_read?, network?}` (see `resolveSandboxRules`). */
  | 'sandbox';

/** The rule of one parameter (see the module doc). */
export interface ParameterRule {
  readonly type: ParameterType;
  /** What a number counts (`seconds`, `lines`, …). */
  readonly unit?: string;
  /** Smallest value (numbers) or length (strings, lists). */
  readonly min?: Configured<number>;
  /** Largest value (numbers) or length (strings, lists). */
  readonly max?: Configured<number>;
  /** What applies when the caller gives none; absent = nothing (the parameter is optional without one). */
  readonly default?: Configured<string | number | boolean>;
  /** The valid values of an `enum`. */
  readonly values?: readonly string[];
}

/** Kill signals (`kill_process`'s `signal`). */
export const KILL_SIGNALS = [
  'SIGTERM',
  'SIGKILL',
  'SIGINT',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
] as const;

/** The views of `read_output`. */
export const OUTPUT_VIEWS = ['text', 'screen', 'raw'] as const;

/** Longest session and command ids accepted. */
const ID_MAX = 200;

const seconds = (fallback: (c: ParameterContext) => number) =>
  ({
    type: 'number',
    unit: 'seconds',
    min: 0,
    max: (c: ParameterContext) => c.limits.maxTimeoutS,
    default: fallback,
  }) as const;

/**
 * The rules of the parameters the engine and the drivers check, by parameter name. A name means the same
 * thing in every operation that takes it.
 */
export const PARAMETER_RULES = {
  command: { type: 'string', min: 1, max: (c) => c.limits.maxInputBytes, unit: 'bytes' },
  text: { type: 'string', max: (c) => c.limits.maxInputBytes, unit: 'bytes' },
  session_id: { type: 'string', min: 1, max: ID_MAX },
  command_id: { type: 'string', min: 1, max: ID_MAX },
  pause_timeout: seconds((c) => c.defaults.pauseTimeoutS),
  total_timeout: seconds((c) => c.defaults.totalTimeoutS),
  until: { type: 'string', min: 1, max: USER_PATTERN_MAX_CHARS },
  filter: { type: 'string', min: 1, max: USER_PATTERN_MAX_CHARS },
  max_output_chars: {
    type: 'integer',
    unit: 'characters',
    min: 100,
    max: (c) => c.limits.maxOutputChars,
    default: (c) => Math.min(c.defaults.maxOutputChars, c.limits.maxOutputChars),
  },
  background: { type: 'boolean', default: false },
  cwd: { type: 'string', min: 1 },
  offset: { type: 'integer', unit: 'lines' },
  length: { type: 'integer', unit: 'lines', min: 1, max: 100_000, default: 1000 },
  view: { type: 'enum', values: OUTPUT_VIEWS, default: 'text' },
  enter: { type: 'boolean', default: true },
  secret: { type: 'boolean', default: false },
  key: { type: 'keys', min: 1, max: 256 },
  process_filter: { type: 'string', min: 1, max: 1000 },
  include_finished: { type: 'boolean', default: true },
  signal: { type: 'enum', values: KILL_SIGNALS, default: 'SIGTERM' },
  grace_s: { type: 'number', unit: 'seconds', min: 0, max: 300, default: (c) => c.defaults.killGraceS },
  shell: { type: 'string', min: 1 },
  env: { type: 'string_map' },
  cols: {
    type: 'integer',
    unit: 'columns',
    min: 1,
    max: (c) => c.limits.maxCols,
    default: (c) => c.defaults.cols,
  },
  rows: {
    type: 'integer',
    unit: 'rows',
    min: 1,
    max: (c) => c.limits.maxRows,
    default: (c) => c.defaults.rows,
  },
  name: { type: 'string', min: 1, max: 100 },
  sandbox: { type: 'sandbox' },
  host: { type: 'string', min: 1, max: 1000 },
  port: { type: 'integer', min: 1, max: 65535, default: 22 },
  username: { type: 'string', min: 1, max: 256 },
  password: { type: 'string', min: 1, max: 4096 },
  private_key_path: { type: 'string', min: 1, max: 4096 },
  passphrase: { type: 'string', min: 1, max: 4096 },
  use_agent: { type: 'boolean', default: true },
  known_hosts_path: { type: 'string', min: 1, max: 4096 },
  connect_timeout: { type: 'number', unit: 'seconds', min: 0.1, max: 3600, default: 20 },
  keepalive_interval: { type: 'number', unit: 'seconds', min: 0, max: 3600, default: 15 },
} as const satisfies Record<string, ParameterRule>;

/** A parameter that has a rule. */
export type RuledParameter = keyof typeof PARAMETER_RULES;

function configuredValue<T>(value: Configured<T>, context: ParameterContext): T {
  return typeof value === 'function' ? (value as (c: ParameterContext) => T)(context) : value;
}

/** The range of a rule in an engine's configuration (undefined ends are open). */
export function parameterRange(
  rule: ParameterRule,
  context: ParameterContext,
): { min: number | undefined; max: number | undefined } {
  return {
    min: rule.min === undefined ? undefined : configuredValue(rule.min, context),
    max: rule.max === undefined ? undefined : configuredValue(rule.max, context),
  };
}

/** The default of a rule in an engine's configuration (undefined: none). */
export function parameterDefault(
  rule: ParameterRule,
  context: ParameterContext,
): string | number | boolean | undefined {
  return rule.default === undefined ? undefined : configuredValue(rule.default, context);
}

/**
 * What the valid values of a rule are, in words, e.g. `seconds, a number from 0 to 3600 (default 9)`: the
 * hint of an INVALID_ARGUMENT error.
 */
export function describeRule(rule: ParameterRule, context: ParameterContext): string {
  const { min, max } = parameterRange(rule, context);
  const fallback = parameterDefault(rule, context);
  const suffix = fallback === undefined ? '' : ` (default ${JSON.stringify(fallback)})`;
  if (rule.type === 'enum') return `one of ${(rule.values ?? []).join(', ')}${suffix}`;
  if (rule.type === 'integer' || rule.type === 'number') {
    const kind = rule.type === 'integer' ? 'a whole number' : 'a number';
    const range =
      min !== undefined && max !== undefined
        ? ` from ${min} to ${max}`
        : min !== undefined
          ? ` of at least ${min}`
          : max !== undefined
            ? ` of at most ${max}`
            : '';
    return `${rule.unit ? `${rule.unit}, ` : ''}${kind}${range}${suffix}`;
  }
  return `a ${rule.type}${suffix}`;
}

/**
 * Applies a numeric or enum parameter's default and checks its range: the engine's one place for both.
 * Throws INVALID_ARGUMENT naming the value and the valid range.
 */
export function resolveParameter<N extends RuledParameter>(
  name: N,
  value: unknown,
  context: ParameterContext,
): (typeof PARAMETER_RULES)[N] extends { type: 'enum' }
  ? string
  : (typeof PARAMETER_RULES)[N] extends { type: 'boolean' }
    ? boolean
    : number {
  const rule: ParameterRule = PARAMETER_RULES[name];
  const result = value === undefined ? parameterDefault(rule, context) : value;
  if (!isValid(rule, result, context)) {
    throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid ${name}: ${JSON.stringify(value)}.`, {
      hint: `${name} is ${describeRule(rule, context)}.`,
    });
  }
  // biome-ignore lint/suspicious/noExplicitAny: the return type follows the rule's type, checked above.
  return result as any;
}

function isValid(rule: ParameterRule, value: unknown, context: ParameterContext): boolean {
  const { min, max } = parameterRange(rule, context);
  switch (rule.type) {
    case 'enum':
      return typeof value === 'string' && (rule.values ?? []).includes(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
    case 'number':
      return (
        typeof value === 'number' &&
        Number.isFinite(value) &&
        (rule.type === 'number' || Number.isInteger(value)) &&
        (min === undefined || value >= min) &&
        (max === undefined || value <= max)
      );
    default:
      return true;
  }
}

/**
 * Checks a directory parameter (`cwd`, and what the profiles map onto it: `working_dir`, `directory`) before
 * anything runs: a NUL cannot be in a path (the OS would cut it there, and a shell would choke on it).
 * Throws INVALID_ARGUMENT naming the parameter and where the NUL is.
 */
export function checkDirectoryParameter(name: string, value: string): void {
  const at = value.indexOf('\0');
  if (at === -1) return;
  throw new ConchError(
    ErrorCode.INVALID_ARGUMENT,
    `Invalid ${name}: it contains a NUL byte at index ${at} (${JSON.stringify(value.slice(0, 200))}); a path cannot.`,
    { hint: `Give the directory without NUL (\\0) characters.` },
  );
}
