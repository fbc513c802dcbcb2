/**
 * The MCP input schemas, derived from the service's parameter table (`VERB_PARAMETERS`): zod types with
 * the table's ranges and defaults in the engine's configuration. Nothing here decides a range or a
 * default: a schema shows the default (JSON Schema `default`) and the engine applies it.
 *
 * A profile maps its own parameter names onto the table's and may give another default or description
 * ({@link ParameterOverride}); the type and range stay the table's.
 */

import { type ParameterContext, parameterDefault, parameterRange, SANDBOX_NETWORK_WORDS } from '@conch/core';
import {
  type ParameterDefinition,
  type ParameterValue,
  parameterDescription,
  VERB_PARAMETERS,
  type VerbWithParameters,
} from '@conch/service';
import * as z from 'zod';
import { cached } from './memo.js';

/** `create_local`'s `sandbox`: true, false, or rules (checked again, with the host's facts, by the core). */
const SandboxRequestSchema = z.union([
  z.boolean(),
  z.strictObject({
    write: z.array(z.string()).optional(),
    deny_read: z.array(z.string()).optional(),
    network: z.union([z.enum(SANDBOX_NETWORK_WORDS), z.array(z.string())]).optional(),
  }),
]);

/** What a profile (or an operator setting) changes of a table parameter. */
export interface ParameterOverride {
  /** Another default (what the original tool used). */
  default?: string | number | boolean;
  /** Another description (the original's words). */
  description?: string;
  /** Required (true) or optional (false) where the table says otherwise. */
  required?: boolean;
  /** Only these values of an enum. */
  values?: readonly string[];
}

function baseType(definition: ParameterDefinition, context: ParameterContext, values?: readonly string[]) {
  const { min, max } = parameterRange(definition, context);
  switch (definition.type) {
    case 'string': {
      // Length limits guard the server, they tell a model nothing: checked, not listed in the schema. A
      // limit in bytes is the engine's to check (a character count would be wrong for it).
      const lo = min ?? 0;
      const hi = definition.unit === 'bytes' ? Number.POSITIVE_INFINITY : (max ?? Number.POSITIVE_INFINITY);
      if (lo === 0 && hi === Number.POSITIVE_INFINITY) return z.string();
      const range = hi === Number.POSITIVE_INFINITY ? `at least ${lo}` : `${lo} to ${hi}`;
      return z.string().refine((v) => v.length >= lo && v.length <= hi, `must be ${range} characters long`);
    }
    case 'integer':
    case 'number': {
      if (definition.type === 'integer' && min === undefined && max === undefined) {
        // Without a range, `int()` would list the safe-integer bounds.
        return z.number().refine(Number.isInteger, 'must be a whole number').meta({ type: 'integer' });
      }
      let n = definition.type === 'integer' ? z.number().int() : z.number();
      if (min !== undefined) n = n.min(min);
      if (max !== undefined) n = n.max(max);
      return n;
    }
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum((values ?? definition.values ?? []) as [string, ...string[]]);
    case 'keys': {
      const name = z.string().refine((v) => v.length > 0, 'must not be empty');
      const lo = min ?? 1;
      const hi = max ?? Number.POSITIVE_INFINITY;
      return z.union([
        name,
        z.array(name).refine((v) => v.length >= lo && v.length <= hi, `must hold ${lo} to ${hi} keys`),
      ]);
    }
    case 'string_map':
      return z.record(z.string(), z.string());
    case 'sandbox':
      return SandboxRequestSchema;
  }
}

/** The zod type of one table parameter in an engine's configuration, with a profile's override. */
export function zodFor(
  definition: ParameterDefinition,
  context: ParameterContext,
  override: ParameterOverride = {},
): z.ZodType {
  const base = baseType(definition, context, override.values);
  const required = override.required ?? definition.required ?? false;
  const fallback = 'default' in override ? override.default : parameterDefault(definition, context);
  const meta: Record<string, unknown> = {};
  if (fallback !== undefined) meta.default = fallback;
  if (definition.writeOnly) meta.writeOnly = true;
  const typed = required ? base : base.optional();
  const described = (Object.keys(meta).length > 0 ? typed.meta(meta) : typed).describe(
    override.description ?? parameterDescription(definition, context),
  );
  return described;
}

/** The zod type of a table parameter: its value type, optional unless required. */
export type ZodOf<D> = D extends { required: true }
  ? z.ZodType<ParameterValue<D>>
  : z.ZodOptional<z.ZodType<ParameterValue<D>>>;

/** The zod shape of a verb's parameters. */
export type VerbShape<V extends VerbWithParameters> = {
  -readonly [K in keyof (typeof VERB_PARAMETERS)[V]]: ZodOf<(typeof VERB_PARAMETERS)[V][K]>;
};

/** The shapes built so far, per configuration and verb (see memo.ts). */
const shapes = new WeakMap<ParameterContext, Map<VerbWithParameters, unknown>>();

/** The zod shape of a verb's parameters (all of them, in the table's order); built once per configuration. */
export function zodShapeFor<V extends VerbWithParameters>(verb: V, context: ParameterContext): VerbShape<V> {
  const byVerb = cached(shapes, context, () => new Map<VerbWithParameters, unknown>());
  let shape = byVerb.get(verb) as VerbShape<V> | undefined;
  if (shape === undefined) {
    const table: Record<string, ParameterDefinition> = VERB_PARAMETERS[verb];
    shape = Object.fromEntries(
      Object.entries(table).map(([name, definition]) => [name, zodFor(definition, context)]),
    ) as VerbShape<V>;
    byVerb.set(verb, shape);
  }
  return shape;
}

/** One table parameter of a verb as a typed zod type, with a profile's override. */
export function zodParameter<
  V extends VerbWithParameters,
  K extends keyof (typeof VERB_PARAMETERS)[V] & string,
>(
  verb: V,
  name: K,
  context: ParameterContext,
  override: ParameterOverride = {},
): ZodOf<(typeof VERB_PARAMETERS)[V][K]> {
  return zodFor(tableParameter(verb, name), context, override) as ZodOf<(typeof VERB_PARAMETERS)[V][K]>;
}

/** The table's definition of one parameter of a verb (for profiles that rename or re-default it). */
export function tableParameter(verb: VerbWithParameters, name: string): ParameterDefinition {
  const table: Record<string, ParameterDefinition> = VERB_PARAMETERS[verb];
  const definition = table[name];
  if (definition === undefined) throw new Error(`${verb} has no parameter ${name}`);
  return definition;
}
