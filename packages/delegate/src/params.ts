/**
 * The one definition of `delegate_task`: its parameters (name, type, range, default, description) and its
 * result shape. Every face (MCP servers, CLI) derives its schema and help from these.
 */

import * as z from 'zod';

/** The agents a task may run as: `build` has full access, `plan` and `explore` are read-only. */
export const DELEGATE_AGENTS = ['build', 'plan', 'explore'] as const;
/** One of {@link DELEGATE_AGENTS}. */
export type DelegateAgent = (typeof DELEGATE_AGENTS)[number];

/** The default agent. */
export const DEFAULT_DELEGATE_AGENT: DelegateAgent = 'build';
/** How long a task may run before it is aborted (seconds). */
export const DEFAULT_DELEGATE_TIMEOUT_S = 1800;
/** The longest `timeout_s` accepted (seconds): 4 hours. */
export const MAX_DELEGATE_TIMEOUT_S = 14_400;
/** The cap on the final answer returned in `output` (characters). */
export const DEFAULT_OUTPUT_CAP = 8000;

/** The parameters of `delegate_task`, strict (unknown parameters are an error). */
export const delegateTaskInput = z.strictObject({
  task: z.string().min(1).describe('The task in plain words: what, where, how to know it is done.'),
  dir: z.string().min(1).describe('Absolute working directory (the project root for OpenCode).'),
  session_id: z.string().min(1).optional().describe('Continue this OpenCode session (from a result).'),
  model: z
    .string()
    .regex(/^[^/]+\/.+$/, 'must be "provider/model"')
    .optional()
    .describe('"provider/model", e.g. "anthropic/claude-sonnet-4-5". Default: OpenCode\'s configured model.'),
  agent: z
    .enum(DELEGATE_AGENTS)
    .default(DEFAULT_DELEGATE_AGENT)
    .describe('"build" (full access), "plan" or "explore" (read-only).'),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(MAX_DELEGATE_TIMEOUT_S)
    .default(DEFAULT_DELEGATE_TIMEOUT_S)
    .describe('Seconds before the task is aborted (status "timeout").'),
});

/** Parsed `delegate_task` arguments (defaults applied). */
export type DelegateTaskArgs = z.output<typeof delegateTaskInput>;
/** `delegate_task` arguments as a caller writes them (defaults optional). */
export type DelegateTaskInput = z.input<typeof delegateTaskInput>;

/** One step of a task: a tool call (name and title) or a model step, never a full trace. */
export const delegateStep = z.object({
  type: z
    .enum(['tool', 'permission'])
    .describe('"tool" for a tool call; "permission" for a rejected request.'),
  tool: z.string().optional().describe('The tool name (write, edit, bash, read…).'),
  title: z.string().optional().describe('What the tool did, in a few words (e.g. the file path).'),
  status: z.string().describe('completed, error, running, or rejected (a permission request).'),
});
/** One step of a {@link DelegateResult}. */
export type DelegateStep = z.output<typeof delegateStep>;

/** The result fields of `delegate_task` (a zod shape, for output schemas). */
export const delegateResultShape = {
  status: z
    .enum(['success', 'error', 'timeout', 'cancelled'])
    .describe('success, error (see error), timeout (timeout_s expired) or cancelled.'),
  session_id: z
    .string()
    .describe('The OpenCode session: pass it as session_id to continue the conversation.'),
  output: z.string().describe('The final answer of the agent, capped; a cut is said at the end.'),
  steps: z.array(delegateStep).describe('Tool calls in order (names and titles only).'),
  files_changed: z.array(z.string()).describe('Files the task wrote or edited (absolute paths).'),
  tokens: z
    .object({ input: z.number(), output: z.number(), reasoning: z.number() })
    .optional()
    .describe('Tokens used, when the provider reports them.'),
  error: z
    .string()
    .optional()
    .describe('What went wrong (the provider or model message), when status is not success.'),
};

/** The result of a delegated task. */
export const delegateResult = z.object(delegateResultShape);
/** The result of a delegated task. */
export type DelegateResult = z.output<typeof delegateResult>;

/** Caps `text` at `cap` characters, saying what was cut. */
export function capOutput(text: string, cap: number = DEFAULT_OUTPUT_CAP): string {
  if (text.length <= cap) return text;
  const kept = text.slice(0, cap);
  return `${kept}\n[output cut: ${text.length - cap} of ${text.length} characters omitted]`;
}
