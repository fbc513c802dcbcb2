/**
 * The zod schemas of the tool results (docs/tools.md) and of the error shape (docs/tools.md), plus the helpers that
 * turn them into MCP output schemas that accept both a result and an error.
 *
 * Why the helpers: the MCP SDK's client (1.32) validates `structuredContent` against the tool's
 * `outputSchema` whenever it is present, even when `isError` is true (its server skips the check on errors),
 * and an `outputSchema` must be a JSON object schema (not a union). So each tool's output schema is an
 * object whose result fields are optional, plus an optional `error` field, with a JSON-Schema `anyOf` that
 * requires either every result field or `error` (and a zod refinement that says the same on the server
 * side). The listing says each definition once: a result another tool describes in full gets its field
 * types only (and no `required`), the error shape is described in full by the first tool a server lists.
 */

import { ERROR_CODES } from '@conch/core';
import * as z from 'zod';
import { cached } from './memo.js';

/** The error shape of docs/tools.md. */
export const ErrorInfoSchema = z
  .object({
    code: z
      .enum(ERROR_CODES as unknown as [string, ...string[]])
      .describe('Stable error code, e.g. INVALID_ARGUMENT, COMMAND_NOT_FOUND, POLICY_DENIED.'),
    message: z.string().describe('What went wrong, naming the bad value and the valid choices.'),
    hint: z.string().optional().describe('What to do next.'),
    data: z.record(z.string(), z.unknown()).optional().describe('Machine-readable details.'),
  })
  .describe('Present only on error results (isError: true).');

/** `{ code, message, hint?, data? }`. */
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

/**
 * A whole number. The JSON Schema leaves out zod's safe-integer bounds (±9007199254740991 on every
 * integer field of every tool, the bulk of the listing, saying nothing a client needs).
 */
const int = () => z.number().int().meta({ minimum: undefined, maximum: undefined });

/** `prompt` of a CommandResult. */
export const PromptSchema = z
  .object({
    kind: z
      .enum(['password', 'yes_no', 'pager', 'repl', 'press_key', 'screen', 'text'])
      .describe(
        'password → respond with secret:true; yes_no → respond "y"/"n"; pager → send_control q/space; repl/text → respond; press_key → send_control; screen = a full-screen program (vim, top) → keys with send_control/respond.',
      ),
    text: z.string().describe('The prompt as shown, e.g. "Password: ".'),
  })
  .describe('The prompt the command waits at (state awaiting_input).');

/** `output_info` of a CommandResult. */
export const OutputInfoSchema = z.object({
  bytes_total: int().describe('Bytes the command has printed so far.'),
  lines_total: int().describe('Lines in its text log so far.'),
  truncated: z
    .boolean()
    .describe('True when this call left part of the new output out (over max_output_chars).'),
  omitted_lines: int().describe('Lines left out of this call; page through them with read_output offset.'),
  log_path: z.string().optional().describe('Private file with the full log, once the output passed 64 KiB.'),
});

/** `page` of a paged `read_output`. */
export const PageSchema = z
  .object({
    from_line: int().describe('First line returned (0-based).'),
    to_line: int().describe('Line after the last returned.'),
    total_lines: int(),
    remaining_lines: int().describe('Lines after this page.'),
    dropped_lines: int().describe('Lines gone from memory and the spill file (beyond the caps).'),
  })
  .describe('Present on paged read_output calls (offset or filter given).');

/** `screen` of a `read_output view:"screen"`. */
export const ScreenSchema = z
  .object({
    rows: z.array(z.string()).describe('The screen lines, top to bottom.'),
    cursor: z.object({ row: int(), col: int() }).describe('Cursor position, 0-based.'),
    alt_screen: z
      .boolean()
      .describe('True while a full-screen program (vim, less, htop) uses the alternate screen.'),
    cols: int(),
    rows_count: int(),
  })
  .describe('The terminal screen as a terminal emulator renders it (read_output view:"screen").');

/** CommandResult (docs/tools.md), the result of execute, read_output, respond and send_control. */
export const CommandResultShape = {
  status: z
    .enum(['completed', 'partial'])
    .describe('completed = the command has ended (see exit_code); partial = it is still running.'),
  command_id: z.string().describe('Handle for read_output, respond, send_control, kill_process.'),
  session_id: z.string(),
  output: z
    .string()
    .describe(
      'Text since the previous waiting call for this command (budgeted); a paged read_output: the page; a screen read: the screen.',
    ),
  exit_code: int().nullable().optional().describe('Completed only: the exit status; null = unknown.'),
  signal: z
    .string()
    .nullable()
    .optional()
    .describe('Completed only: the signal that ended it, e.g. "SIGINT".'),
  state: z
    .enum(['running', 'awaiting_input', 'exited', 'killed', 'lost'])
    .describe(
      'running; awaiting_input (answer with respond/send_control); exited; killed; lost (connection gone).',
    ),
  reason: z
    .enum([
      'exited',
      'silence',
      'total_timeout',
      'awaiting_input',
      'until_matched',
      'cancelled',
      'background',
    ])
    .describe('Why this call returned; says nothing about the command ending (status does).'),
  prompt: PromptSchema.optional(),
  cwd: z.string().optional().describe("The session shell's cwd after a completed foreground command."),
  cwd_changed: z.literal(true).optional().describe('The command changed the cwd.'),
  isolated: z
    .boolean()
    .optional()
    .describe('True when it ran as its own process (background or busy session).'),
  held_by_person: z.literal(true).optional().describe('Isolated as a person held the terminal.'),
  swallowed: z.literal(true).optional().describe("A person's program read it; it did not run."),
  duration_ms: z.number().describe('Milliseconds since the command started.'),
  pause_timeout: z.number().optional().describe('The pause that applied, when reason is silence.'),
  output_info: OutputInfoSchema.optional().describe('Only when this call cut the output.'),
  page: PageSchema.optional(),
  screen: ScreenSchema.optional(),
  output_view: z
    .literal('screen')
    .optional()
    .describe('"screen": output is the compact screen of a full-screen program (vim, top).'),
  session_ended: z
    .literal(true)
    .optional()
    .describe("The session's shell exited with this command; the session is closed."),
  new_shell: z
    .literal(true)
    .optional()
    .describe('First result in a recreated default session: cwd and env were reset.'),
  hint: z.string().optional().describe('What the sandbox refused.'),
};

/** Session (docs/tools.md). */
export const SessionSchema = z.object({
  session_id: z.string(),
  kind: z.enum(['local', 'ssh']),
  name: z.string(),
  state: z
    .enum(['idle', 'busy', 'closed', 'lost'])
    .describe(
      'idle = ready; busy = a command or a person holds it (new commands run isolated); closed = its shell exited; lost = connection gone.',
    ),
  cwd: z.string().nullable().describe("The shell's current directory (null until known)."),
  shell: z.string(),
  host: z.string().optional(),
  port: int().optional(),
  username: z.string().optional(),
  sandbox: z
    .object({
      write: z.array(z.string()),
      deny_read: z.array(z.string()),
      network: z.unknown(),
    })
    .optional()
    .describe(
      'Its OS sandbox: writable paths (+ a private /tmp), unreadable ones, network (none, all, hosts).',
    ),
  pid: int().optional(),
  created_at: z.string().describe('ISO time.'),
  last_activity_at: z.string().describe('ISO time.'),
  foreground_command_id: z.string().optional().describe('The command the shell is running now, if any.'),
  command_ids: z.array(z.string()).describe('Commands of this session that are still known.'),
  attached: z
    .object({ viewers: int(), holds_terminal: z.boolean() })
    .optional()
    .describe('People watching (conch attach); holds_terminal: a person holds it now.'),
});

/** Process (docs/tools.md), one entry of list_processes. */
export const ProcessSchema = z.object({
  command_id: z.string(),
  session_id: z.string(),
  command: z.string(),
  command_chars: int().optional().describe('Only when command was cut (ends in …): its whole length.'),
  pid: int().nullable(),
  pgid: int().optional(),
  state: z.enum(['running', 'awaiting_input', 'exited', 'killed', 'lost']),
  exit_code: int().nullable(),
  signal: z.string().nullable(),
  background: z.boolean(),
  isolated: z.boolean(),
  started_at: z.string(),
  ended_at: z.string().optional(),
  duration_ms: z.number(),
  output_bytes: z.number(),
  log_path: z.string().optional(),
  escaped_pids: z
    .array(int())
    .optional()
    .describe('Ended command: live processes it left behind (kill_process on it kills them).'),
});

/** connect_ssh result: a Session (described under create_local) plus what the connection showed (docs/tools.md). */
export const ConnectSshShape = {
  ...withoutDescriptions(SessionSchema.shape),
  banner: z
    .string()
    .describe("The server's pre-login banner (sshd Banner), as sent; empty when it sends none."),
  host_key_fingerprint: z
    .string()
    .describe(
      'SHA256 fingerprint of the host key that was verified, as ssh-keygen -l prints it ("SHA256:…").',
    ),
  host_key_type: z.string().describe('The host key type, e.g. "ssh-ed25519".'),
  host_key_note: z
    .string()
    .optional()
    .describe(
      'Present when the host key policy did something to know about: a new key recorded in known_hosts (accept-new, or confirmed by the person under ask), or a key accepted WITHOUT verification (insecure).',
    ),
  via: z
    .array(z.string())
    .optional()
    .describe('ProxyJump hops the connection went through (user@host:port), outermost first.'),
};

/** list_sessions result (a Session is described under create_local). */
export const ListSessionsShape = { sessions: z.array(z.object(withoutDescriptions(SessionSchema.shape))) };

/** list_processes result. */
export const ListProcessesShape = { processes: z.array(ProcessSchema) };

/** close_session result. */
export const CloseSessionShape = {
  session_id: z.string(),
  closed: z.literal(true),
  killed_command_ids: z.array(z.string()).describe('Commands that were still running and were killed.'),
};

/** kill_process result. */
export const KillResultShape = {
  command_id: z.string(),
  result: z
    .enum(['killed', 'already_exited', 'stop_unconfirmed'])
    .describe(
      'killed; already_exited (it had ended before); stop_unconfirmed (some processes survived SIGKILL).',
    ),
  exit_code: int().nullable(),
  signal: z.string().nullable(),
  survivors: z.array(int()).describe('PIDs still alive after SIGKILL.'),
};

/** check_command result: PolicyDecision (docs/policy.md). */
export const PolicyDecisionShape = {
  decision: z.enum(['allow', 'deny']),
  reason: z.string(),
  commands: z
    .array(
      z.object({
        text: z.string(),
        argv: z.array(z.string()),
        decision: z.enum(['allow', 'deny']),
        rule: z.string().optional(),
      }),
    )
    .describe('Each simple command found in the input, with its verdict and the rule that decided it.'),
};

/** A raw zod shape. */
export type Shape = Record<string, z.ZodType>;

/**
 * The same fields without their descriptions, for a shape another tool's output schema already describes
 * (a Session: described once, under create_local; list_sessions and connect_ssh give its fields' types and
 * enums only). Objects, arrays, optional and
 * nullable wrappers are rebuilt; any other schema is cloned without its metadata (a zod clone inherits
 * its parent's description through `_zod.parent`, which the clone drops).
 */
export function withoutDescriptions(shape: Shape): Shape {
  return Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, undescribed(schema)]));
}

function undescribed(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) return z.object(withoutDescriptions(schema.shape as Shape));
  if (schema instanceof z.ZodOptional) return undescribed(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return undescribed(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodArray) return z.array(undescribed(schema.element as z.ZodType));
  const { description: _description, ...meta } = (schema.meta() ?? {}) as Record<string, unknown>;
  const copy = schema.clone();
  z.globalRegistry.remove(copy);
  (copy._zod as { parent?: unknown }).parent = undefined;
  return Object.keys(meta).length > 0 ? copy.meta(meta) : copy;
}

/** The exact result schema of a shape (strips unknown keys when parsing). */
export function resultSchema<S extends Shape>(shape: S): z.ZodObject<S> {
  return z.object(shape);
}

/** A JSON Schema (or a fragment of one). */
export type JsonSchema = Record<string, unknown>;

function isRecord(value: unknown): value is JsonSchema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * zod's JSON Schema without what tells a client nothing: no `$schema` key, no `additionalProperties: false`
 * (results are stripped to their exact schema before they are sent), no `propertyNames: {type: string}` or
 * `additionalProperties: {}` on records, no safe-integer bounds, and a nullable scalar as `type: [T, "null"]`
 * instead of an `anyOf`. With `descriptions: false`, the `description` of every node is dropped too.
 */
export function compactJsonSchema(node: JsonSchema, options: { descriptions?: boolean } = {}): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if (key === 'description' && options.descriptions === false) continue;
    if (
      key === 'additionalProperties' &&
      (value === false || (isRecord(value) && Object.keys(value).length === 0))
    )
      continue;
    if (
      key === 'propertyNames' &&
      isRecord(value) &&
      value.type === 'string' &&
      Object.keys(value).length === 1
    )
      continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER)
      continue;
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, field]) => [
          name,
          isRecord(field) ? compactJsonSchema(field, options) : field,
        ]),
      );
    } else if (Array.isArray(value)) {
      out[key] = value.map((item) => (isRecord(item) ? compactJsonSchema(item, options) : item));
    } else {
      out[key] = isRecord(value) ? compactJsonSchema(value, options) : value;
    }
  }
  const anyOf = out.anyOf;
  const bare = (item: unknown) =>
    isRecord(item) && typeof item.type === 'string' && Object.keys(item).length === 1;
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.every(bare)) {
    out.type = anyOf.map((item) => (item as { type: string }).type);
    delete out.anyOf;
  }
  return out;
}

/** The JSON Schema of a field as a tool result carries it. */
function jsonOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-7', io: 'output' }) as JsonSchema;
}

/** How much of a result an output schema spells out. */
export interface OutputSchemaOptions {
  /**
   * `"described"` (default): every field with its type, enum and description, nested objects in full, and
   * the fields a result always has. `"types"`: each top-level field with its JSON type only, for a tool
   * whose result another tool describes in full (CommandResult: described once, under execute).
   */
  detail?: 'described' | 'types';
  /** Describe the error shape in full (default true); false: `error` is listed as an object only. */
  describeError?: boolean;
}

/**
 * The MCP output schema for a result shape. Its zod side (what the server validates a result against) has
 * every result field optional plus `error`, refined to require either all required result fields or `error`.
 * Its JSON side (what `tools/list` shows) is compact: described results say the same with an `anyOf` of
 * two `required` lists; type-only results leave `required` out, so an error result validates too. The MCP
 * SDK client validates `structuredContent` against this JSON even on `isError` results.
 */
export function outputSchemaFor(shape: Shape, options: OutputSchemaOptions = {}): z.ZodObject {
  const byOptions = cached(outputSchemas, shape, () => new Map<string, z.ZodObject>());
  const key = `${options.detail ?? 'described'} ${options.describeError !== false}`;
  let schema = byOptions.get(key);
  if (schema === undefined) {
    schema = makeOutputSchema(shape, options);
    byOptions.set(key, schema);
  }
  return schema;
}

/** The output schemas made so far, by result shape and options (see memo.ts). */
const outputSchemas = new WeakMap<Shape, Map<string, z.ZodObject>>();

function makeOutputSchema(shape: Shape, options: OutputSchemaOptions): z.ZodObject {
  const required = Object.entries(shape)
    .filter(([, schema]) => !schema.safeParse(undefined).success)
    .map(([key]) => key);
  const optional: Shape = {};
  for (const [key, schema] of Object.entries(shape)) optional[key] = schema.optional();
  const types = options.detail === 'types';
  const described = compactJsonSchema(jsonOf(z.object(shape)), { descriptions: !types });
  const fields = (described.properties ?? {}) as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = types
    ? Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, typeOnly(field)]))
    : { ...fields };
  properties.error =
    options.describeError === false ? { type: 'object' } : compactJsonSchema(jsonOf(ErrorInfoSchema));
  return z
    .object({ ...optional, error: ErrorInfoSchema.optional() })
    .superRefine((value, ctx) => {
      if (value.error !== undefined) return;
      for (const key of required) {
        if ((value as Record<string, unknown>)[key] === undefined) {
          ctx.addIssue({ code: 'custom', message: `missing result field ${key}`, path: [key] });
        }
      }
    })
    .meta({
      $schema: undefined,
      additionalProperties: undefined,
      properties,
      anyOf: types ? undefined : [{ required }, { required: ['error'] }],
    });
}

/** A field reduced to its JSON type (`{type: "string"}`, `{type: ["integer", "null"]}`, `{type: "object"}`). */
function typeOnly(field: JsonSchema): JsonSchema {
  return field.type === undefined ? {} : { type: field.type };
}
