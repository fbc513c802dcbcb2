/**
 * Command line options derived from the parameter table: a CLI option that mirrors a verb parameter
 * (`--pause` ← `pause_timeout`) takes its description, range and default from `VERB_PARAMETERS`, and checks
 * a number against the same rule the engine applies. The option sets no value of its own when left out: the
 * engine applies the default, once.
 */

import {
  DEFAULT_ENGINE_DEFAULTS,
  DEFAULT_LIMITS,
  describeRule,
  type ParameterContext,
  parameterDefault,
  parameterRange,
} from '@conch/core';
import { InvalidArgumentError, Option } from 'commander';
import {
  type ParameterDefinition,
  parameterDescription,
  VERB_PARAMETERS,
  type VerbWithParameters,
} from './parameters.js';

/** The built-in configuration (what a daemon started without flags uses). */
export const DEFAULT_PARAMETER_CONTEXT: ParameterContext = {
  limits: DEFAULT_LIMITS,
  defaults: DEFAULT_ENGINE_DEFAULTS,
};

/**
 * A commander option for parameter `name` of `verb`, e.g. `parameterOption('execute', 'pause_timeout',
 * '--pause <seconds>')`: the table's description plus its default, and for numbers a parser that refuses a
 * value outside the rule's range, naming the range.
 */
export function parameterOption<V extends VerbWithParameters>(
  verb: V,
  name: keyof (typeof VERB_PARAMETERS)[V] & string,
  flags: string,
  context: ParameterContext = DEFAULT_PARAMETER_CONTEXT,
): Option {
  const table: Record<string, ParameterDefinition | undefined> = VERB_PARAMETERS[verb];
  const definition = table[name];
  if (definition === undefined) throw new Error(`${verb} has no parameter ${name}`);
  const fallback = parameterDefault(definition, context);
  const option = new Option(
    flags,
    `${parameterDescription(definition, context)}${fallback === undefined ? '' : ` (default ${fallback})`}`,
  );
  if (definition.type === 'number' || definition.type === 'integer') {
    const { min, max } = parameterRange(definition, context);
    option.argParser((value: string) => {
      const n = value.trim() === '' ? Number.NaN : Number(value);
      const whole = definition.type === 'number' || Number.isInteger(n);
      if (!Number.isFinite(n) || !whole || (min !== undefined && n < min) || (max !== undefined && n > max)) {
        throw new InvalidArgumentError(
          `expected ${describeRule(definition, context)}, got ${JSON.stringify(value)}.`,
        );
      }
      return n;
    });
  }
  return option;
}
