/**
 * How conch registers an MCP tool: one place that gives every tool the same guarantees.
 *
 * - Validation: the strict zod schema is ours. The SDK is handed a *lenient twin* whose JSON Schema is
 *   identical (so clients see the exact types, ranges, enums and descriptions) but whose parse accepts
 *   anything; we then parse with the strict schema ourselves. The SDK would otherwise answer a bad argument
 *   with a bare text error; this way it is a docs/tools.md `INVALID_ARGUMENT` result naming the parameter and
 *   its valid values.
 * - Results: `structuredContent` checked against (and stripped to) the exact result schema, plus one text
 *   block rendering the same result.
 * - Errors: every throw becomes `isError: true` + `structuredContent.error`; nothing escapes to crash the
 *   server.
 * - Progress and cancellation: the request's progress token turns the engine's `onProgress` into
 *   `notifications/progress`; the request's abort signal becomes the engine's cancellation signal.
 * - Logs: tool name, request id, ids and status only — never arguments (respond text may be a secret).
 * - Secrets: a parameter marked `.meta({ writeOnly: true })` (a password) is never echoed in an
 *   INVALID_ARGUMENT message, even when malformed.
 */

import { type CallContext, ConchError, ErrorCode, markPhase, type Vocabulary } from '@conch/core';
import type { Logger } from '@conch/service';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { errorInfo, errorResult } from './error-result.js';
import { cached } from './memo.js';
import { outputSchemaFor, type Shape } from './schemas.js';
import { MCP_VOCABULARY, vocabularyOf } from './vocabulary.js';

/** What a tool's `run` gets besides its arguments. */
export interface ToolCallContext {
  /** Pass to the engine: cancellation (the wait ends, the command keeps running) and progress. */
  call: CallContext;
  /** The MCP request id (for logs). */
  requestId: string | number;
}

/** A conch tool: strict input schema, exact result shape, renderer and handler. */
export interface ConchToolDefinition<I extends z.ZodObject, R> {
  name: string;
  title: string;
  description: string;
  /** Strict input schema (`z.strictObject`), every field with `.describe()`. */
  input: I;
  /** The exact result shape (the output schema also accepts the error shape). */
  output: Shape;
  /**
   * The tool whose output schema describes this same result in full: this one lists each field's type only
   * (the listing says each definition once).
   */
  outputDescribedBy?: string;
  annotations: ToolAnnotations;
  run(args: z.output<I>, context: ToolCallContext): Promise<R> | R;
  /** The text block: renders the same result. */
  render(result: R, args: z.output<I>): string;
}

/** The JSON-schema fragments made so far, by field schema (see memo.ts). */
const fieldJsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/** A JSON-schema fragment for one field, as zod renders it for the `input` side (do not modify it). */
function fieldJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return cached(fieldJsonSchemas, schema, () => makeFieldJsonSchema(schema));
}

function makeFieldJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<
    string,
    unknown
  >;
  // zod's safe-integer bounds on an unbounded integer say nothing a client needs.
  for (const bound of ['minimum', 'maximum'] as const)
    if (Math.abs(Number(json[bound])) === Number.MAX_SAFE_INTEGER) delete json[bound];
  return json;
}

/**
 * The lenient twin of a strict object schema: same JSON Schema (properties, required,
 * `additionalProperties: false`), but parsing accepts any value so the strict parse is ours to report.
 */
export function lenientTwin(strict: z.ZodObject): z.ZodObject {
  return cached(lenientTwins, strict.shape, () => makeLenientTwin(strict));
}

/** The lenient twins made so far, by the strict schema's shape (see memo.ts). */
const lenientTwins = new WeakMap<object, z.ZodObject>();

/** Each field's lenient twin and whether the field is required, by field schema (see memo.ts). */
const lenientFields = new WeakMap<z.ZodType, { twin: z.ZodType; required: boolean }>();

function makeLenientTwin(strict: z.ZodObject): z.ZodObject {
  const properties: Shape = {};
  const required: string[] = [];
  for (const [key, schema] of Object.entries(strict.shape as Shape)) {
    const field = cached(lenientFields, schema, () => ({
      twin: z.unknown().optional().meta(fieldJsonSchema(schema)),
      required: !schema.safeParse(undefined).success,
    }));
    properties[key] = field.twin;
    if (field.required) required.push(key);
  }
  return z
    .looseObject(properties)
    .meta({ $schema: undefined, additionalProperties: false, ...(required.length > 0 ? { required } : {}) });
}

/**
 * True for a parameter declared secret with `.meta({ writeOnly: true })` (JSON Schema's "sent but never
 * returned"): its value never appears in error messages.
 */
function isWriteOnly(schema: z.ZodType): boolean {
  return fieldJsonSchema(schema).writeOnly === true;
}

/**
 * What the schema allows, in words (`from 0 to 3600, default 9`): the descriptions no longer repeat the
 * schema, so an error says it.
 */
function validValues(schema: z.ZodType): string {
  const json = fieldJsonSchema(schema);
  const parts: string[] = [];
  const { minimum, maximum } = json;
  if (typeof minimum === 'number' && typeof maximum === 'number') parts.push(`from ${minimum} to ${maximum}`);
  else if (typeof minimum === 'number') parts.push(`at least ${minimum}`);
  else if (typeof maximum === 'number') parts.push(`at most ${maximum}`);
  if (json.default !== undefined) parts.push(`default ${JSON.stringify(json.default)}`);
  return parts.join(', ');
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  try {
    const json = JSON.stringify(value);
    return json.length > 120 ? `${json.slice(0, 117)}...` : json;
  } catch {
    return String(value);
  }
}

function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function pathName(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join('');
}

/**
 * Turns a zod error of a strict input parse into an `INVALID_ARGUMENT` ConchError naming each bad
 * parameter, its value and what is valid (the parameter's own description included as the hint).
 */
export function invalidArgumentFromZod(
  tool: string,
  strict: z.ZodObject,
  error: z.ZodError,
  args: unknown,
): ConchError {
  const shape = strict.shape as Shape;
  const valid = Object.keys(shape);
  const problems: string[] = [];
  const hints: string[] = [];
  const params = new Set<string>();
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      problems.push(
        `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` +
          ` (valid parameters: ${valid.join(', ')})`,
      );
      continue;
    }
    const name = issue.path.length > 0 ? pathName(issue.path) : '(arguments)';
    const top = issue.path[0];
    if (typeof top === 'string') params.add(top);
    const value = valueAt(args, issue.path);
    if (value === undefined && issue.path.length > 0 && issue.code === 'invalid_type') {
      problems.push(`missing required parameter ${name}`);
      continue;
    }
    // A secret parameter (`writeOnly`, e.g. a password) is never echoed, not even when it is malformed.
    const secret = typeof top === 'string' && shape[top] !== undefined && isWriteOnly(shape[top]);
    let why = issue.message;
    if (issue.code === 'invalid_value')
      why = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    else if (issue.code === 'too_big') why = `must be at most ${String(issue.maximum)}`;
    else if (issue.code === 'too_small') why = `must be at least ${String(issue.minimum)}`;
    problems.push(`${name} = ${secret ? '(hidden)' : describeValue(value)}: ${why}`);
  }
  for (const param of params) {
    const schema = shape[param];
    const valid = schema === undefined ? '' : validValues(schema);
    if (schema?.description) hints.push(`${param}: ${schema.description}${valid ? ` (${valid})` : ''}`);
  }
  const message = `Invalid arguments for ${tool}: ${problems.join('; ')}.`;
  return new ConchError(ErrorCode.INVALID_ARGUMENT, message, {
    ...(hints.length > 0 ? { hint: hints.join(' ') } : {}),
    data: {
      parameters: [...params],
      issues: error.issues.map((i) => ({ path: i.path.map(String), code: i.code, message: i.message })),
    },
  });
}

/** What a conch tool handler uses of the SDK's request context (the direct path gives exactly this). */
export type ToolHandlerExtra = Pick<
  RequestHandlerExtra<ServerRequest, ServerNotification>,
  'signal' | 'requestId' | '_meta' | 'sendNotification'
>;

/** A registered conch tool's handler: raw arguments in, the complete MCP result out; it never throws. */
export type ConchToolHandler = (rawArgs: unknown, extra: ToolHandlerExtra) => Promise<CallToolResult>;

/** Each server's conch tools: their SDK registration (to honour `enabled`) and handler. */
const conchTools = new WeakMap<McpServer, Map<string, { tool: RegisteredTool; handler: ConchToolHandler }>>();

/**
 * The handler of `name` when conch's tool kit registered it on `server` and it is enabled (for the direct
 * path of `tools/call`, see `direct-tool-calls.ts`); undefined otherwise.
 */
export function conchToolHandler(server: McpServer, name: string): ConchToolHandler | undefined {
  const entry = conchTools.get(server)?.get(name);
  return entry?.tool.enabled ? entry.handler : undefined;
}

/**
 * The engine's call context for one MCP request: its abort signal, the connection's words for the
 * operations, and progress when asked for.
 */
export function callContextFor(
  extra: ToolHandlerExtra,
  logger: Logger,
  vocabulary: Vocabulary = MCP_VOCABULARY,
): CallContext {
  const context: CallContext = { signal: extra.signal, vocabulary };
  const token = extra._meta?.progressToken;
  if (token !== undefined) {
    let last = 0;
    context.onProgress = ({ elapsed_ms, message }) => {
      // `progress` must increase with every notification: elapsed seconds, nudged if the clock stalls.
      const progress = Math.max(last + 0.001, Math.round(elapsed_ms) / 1000);
      last = progress;
      const line = message.length > 200 ? `${message.slice(0, 197)}...` : message;
      extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress, message: line },
        })
        .catch((error: unknown) => logger.debug('progress notification failed', { error: String(error) }));
    };
  }
  return context;
}

/** Ids worth logging from a result (never output or arguments). */
function idsOf(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object') return {};
  const v = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['session_id', 'command_id', 'status', 'reason', 'result', 'decision']) {
    if (typeof v[key] === 'string') out[key] = v[key];
  }
  return out;
}

/** The exact result schema of each output shape (see memo.ts). */
const exactSchemas = new WeakMap<Shape, z.ZodObject>();

/** Servers whose listing already describes the error shape in full (the first tool registered does). */
const errorShapeDescribed = new WeakSet<McpServer>();

/** Registers one conch tool on an McpServer with the guarantees described in the module doc. */
export function registerConchTool<I extends z.ZodObject, R>(
  server: McpServer,
  definition: ConchToolDefinition<I, R>,
  logger: Logger,
): void {
  const exact = cached(exactSchemas, definition.output, () => z.object(definition.output));
  const describeError = !errorShapeDescribed.has(server);
  errorShapeDescribed.add(server);
  const handler: ConchToolHandler = async (rawArgs, extra) => {
    markPhase('handler');
    const started = performance.now();
    const tool = definition.name;
    const requestId = extra.requestId;
    logger.debug('tool call', { tool, request: requestId });
    const vocabulary = vocabularyOf(server);
    try {
      const parsed = definition.input.safeParse(rawArgs ?? {});
      if (!parsed.success) throw invalidArgumentFromZod(tool, definition.input, parsed.error, rawArgs);
      const args = parsed.data as z.output<I>;
      const result = await definition.run(args, {
        call: callContextFor(extra, logger, vocabulary),
        requestId,
      });
      const checked = exact.safeParse(result);
      if (!checked.success) {
        logger.error('result does not match the output schema', {
          tool,
          request: requestId,
          issues: checked.error.message,
        });
        throw new ConchError(
          ErrorCode.INTERNAL,
          `Internal error: the ${tool} result does not match its output schema (${checked.error.issues
            .map((i) => `${pathName(i.path)}: ${i.message}`)
            .join('; ')}).`,
          { hint: 'This is a conch bug; the raw result is in data.result.', data: { result } },
        );
      }
      const structured = checked.data as Record<string, unknown>;
      // Debug, not info: a line per call is one more write (and wake-up) for the client reading stderr.
      logger.debug('tool done', {
        tool,
        request: requestId,
        ...idsOf(structured),
        ms: Math.round(performance.now() - started),
      });
      const text = definition.render(structured as R, args);
      markPhase('rendered');
      return { content: [{ type: 'text', text }], structuredContent: structured };
    } catch (error) {
      const info = errorInfo(error, vocabulary);
      const level = info.code === ErrorCode.INTERNAL ? 'error' : 'info';
      logger[level]('tool error', {
        tool,
        request: requestId,
        code: info.code,
        ms: Math.round(performance.now() - started),
        ...(info.code === ErrorCode.INTERNAL ? { message: info.message } : {}),
      });
      return errorResult(error, vocabulary);
    }
  };
  const registered = server.registerTool(
    definition.name,
    {
      title: definition.title,
      description: definition.description,
      inputSchema: lenientTwin(definition.input),
      outputSchema: outputSchemaFor(definition.output, {
        detail: definition.outputDescribedBy === undefined ? 'described' : 'types',
        describeError,
      }),
      annotations: { title: definition.title, ...definition.annotations },
    },
    handler,
  );
  let tools = conchTools.get(server);
  if (tools === undefined) {
    tools = new Map();
    conchTools.set(server, tools);
  }
  tools.set(definition.name, { tool: registered, handler });
}
