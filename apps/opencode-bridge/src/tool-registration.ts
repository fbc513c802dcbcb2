/**
 * The bridge's MCP tool registration, kept minimal and separate on purpose: when conch's MCP tool kit
 * becomes a package of its own, this file is replaced by it. What it guarantees:
 * - strict validation: a bad argument is an `INVALID_ARGUMENT` result naming the parameter and the valid
 *   values (the SDK gets a permissive input schema with the same JSON Schema, so clients see the real one);
 * - a result is `structuredContent` (checked against the output shape) plus one text block;
 * - an error is `isError: true` with `structuredContent: { error: { code, message, hint? } }`, never a crash;
 * - the request's progress token turns `onProgress` into `notifications/progress`; its abort signal is passed on.
 */

import { type CallContext, ConchError, ErrorCode, toConchError } from '@conch/core';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

/** A tool as the bridge registers it. */
export interface BridgeTool<I extends z.ZodObject, R> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: Record<string, z.ZodType>;
  annotations: ToolAnnotations;
  render(result: R): string;
  run(args: z.output<I>, call: CallContext): Promise<R>;
}

const errorShape = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

/** An error as an MCP tool result (conch's `structuredContent.error` shape). */
export function errorResult(error: unknown): CallToolResult {
  const json = toConchError(error).toJSON();
  const info = {
    code: json.code,
    message: json.message,
    ...(json.hint === undefined ? {} : { hint: json.hint }),
  };
  return {
    isError: true,
    content: [
      { type: 'text', text: `Error ${info.code}: ${info.message}${info.hint ? `\nHint: ${info.hint}` : ''}` },
    ],
    structuredContent: { error: info },
  };
}

function invalidArgument(tool: string, error: z.ZodError, shape: Record<string, z.ZodType>): ConchError {
  const problems = error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return `unknown parameter ${issue.keys.join(', ')} (valid parameters: ${Object.keys(shape).join(', ')})`;
    }
    const name = issue.path.map(String).join('.') || '(arguments)';
    if (issue.code === 'invalid_value')
      return `${name}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    return `${name}: ${issue.message}`;
  });
  const top = error.issues.map((i) => i.path[0]).find((p): p is string => typeof p === 'string');
  const hint = top === undefined ? undefined : shape[top]?.description;
  return new ConchError(
    ErrorCode.INVALID_ARGUMENT,
    `Invalid arguments for ${tool}: ${problems.join('; ')}.`,
    {
      ...(hint === undefined ? {} : { hint: `${top}: ${hint}` }),
    },
  );
}

/** Registers `tool` on `server` with the guarantees in the module doc. */
export function registerBridgeTool<I extends z.ZodObject, R>(
  server: McpServer,
  tool: BridgeTool<I, R>,
): void {
  const shape = tool.input.shape as Record<string, z.ZodType>;
  // Same JSON Schema as the strict input, but the parse is ours (so bad input is a result, not a bare error).
  const lenient: Record<string, z.ZodType> = {};
  const required: string[] = [];
  for (const [key, schema] of Object.entries(shape)) {
    const { $schema: _s, ...json } = z.toJSONSchema(schema, { io: 'input', target: 'draft-7' }) as Record<
      string,
      unknown
    >;
    lenient[key] = z.unknown().optional().meta(json);
    if (!schema.safeParse(undefined).success) required.push(key);
  }
  const inputSchema = z.looseObject(lenient).meta({ additionalProperties: false, required });
  const optional: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(tool.output)) optional[key] = schema.optional();
  const resultRequired = Object.entries(tool.output)
    .filter(([, s]) => !s.safeParse(undefined).success)
    .map(([k]) => k);
  const outputSchema = z
    .object({ ...optional, error: errorShape.optional() })
    .meta({ anyOf: [{ required: resultRequired }, { required: ['error'] }] });
  const exact = z.object(tool.output);

  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema,
      outputSchema,
      annotations: tool.annotations,
    },
    async (rawArgs, extra): Promise<CallToolResult> => {
      try {
        const parsed = tool.input.safeParse(rawArgs ?? {});
        if (!parsed.success) throw invalidArgument(tool.name, parsed.error, shape);
        const call: CallContext = { signal: extra.signal };
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          let progress = 0;
          call.onProgress = ({ message }) => {
            progress += 1;
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, message: message.slice(0, 200) },
              })
              .catch(() => undefined);
          };
        }
        const result = await tool.run(parsed.data as z.output<I>, call);
        const structured = exact.parse(result) as Record<string, unknown>;
        return {
          content: [{ type: 'text', text: tool.render(structured as R) }],
          structuredContent: structured,
        };
      } catch (error) {
        return errorResult(error);
      }
    },
  );
}
