/**
 * The `delegate_task` tool as every face shows it: name, title, description, annotations, parameters,
 * result shape and the text rendering of a result. Faces add only their registration.
 */

import { type DelegateResult, delegateResultShape, delegateTaskInput } from './params.js';

/** The tool's name. */
export const DELEGATE_TOOL_NAME = 'delegate_task';

/** The tool's description (what a model reads). */
export const DELEGATE_TOOL_DESCRIPTION = [
  'Hand a whole coding task to OpenCode; get back its answer, steps, files changed and a',
  'session_id to continue. agent "build" may edit files in dir; "plan" and "explore" are read-only. Anything',
  'needing permission (e.g. writing outside dir) is refused, never waited on. Aborted after timeout_s; one task',
  'at a time per session_id.',
].join(' ');

/** The `delegate_task` tool definition shared by the faces (MCP servers, CLI). */
export const delegateTaskTool = {
  name: DELEGATE_TOOL_NAME,
  title: 'Delegate a coding task to OpenCode',
  description: DELEGATE_TOOL_DESCRIPTION,
  input: delegateTaskInput,
  output: delegateResultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  render: renderDelegateResult,
} as const;

/**
 * The text block of a result: the status line first (so a client that keeps only the head of a long
 * result still sees it), then steps, files, and the answer.
 */
export function renderDelegateResult(result: DelegateResult): string {
  const lines = [`OpenCode task ${result.status} (session_id ${result.session_id})`];
  if (result.error) lines.push(`Error: ${result.error}`);
  if (result.steps.length > 0) {
    lines.push(
      `Steps: ${result.steps.map((s) => `${s.tool ?? s.type}${s.title ? ` (${s.title})` : ''} ${s.status}`).join('; ')}`,
    );
  }
  if (result.files_changed.length > 0) lines.push(`Files changed: ${result.files_changed.join(', ')}`);
  if (result.tokens) lines.push(`Tokens: ${result.tokens.input} in, ${result.tokens.output} out`);
  if (result.output !== '') lines.push('', result.output);
  return lines.join('\n');
}
