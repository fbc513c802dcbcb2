/**
 * Reading a task's result back from the session's messages: the final answer (capped), the tool steps
 * (names and titles only), the files changed, the tokens, and the real error of a failed model call.
 */

import { isAbsolute, resolve } from 'node:path';
import type { AssistantMessage, Message, Part } from '@opencode-ai/sdk/v2';
import { capOutput, type DelegateResult, type DelegateStep } from './params.js';

/** The tools whose completed calls change files, and where each keeps the path. */
const FILE_TOOLS: Record<string, string> = { write: 'filePath', edit: 'filePath', multiedit: 'filePath' };

/** What {@link summarizeTurn} reads. */
export interface TurnInput {
  sessionID: string;
  directory: string;
  messages: Array<{ info: Message; parts: Part[] }>;
  /** Permission and question requests that were rejected while the task ran. */
  rejected: DelegateStep[];
  /** Set when the task was aborted. */
  stopReason: 'timeout' | 'cancelled' | 'error' | undefined;
  /** Why the task was aborted with `stopReason` `error` (e.g. the provider kept failing). */
  failure?: string;
  cap: number;
  /** The event stream failed (the result is still read from the messages). */
  streamError?: string;
}

function errorText(error: NonNullable<AssistantMessage['error']>): string {
  const data = error.data as {
    message?: string;
    statusCode?: number;
    responseBody?: string;
    providerID?: string;
  };
  const parts = [data.message ?? error.name];
  if (data.statusCode !== undefined) parts.push(`(HTTP ${data.statusCode})`);
  if (data.responseBody && !(data.message ?? '').includes(data.responseBody.slice(0, 40))) {
    parts.push(`— ${data.responseBody.slice(0, 500)}`);
  }
  return `${error.name}: ${parts.join(' ')}`;
}

/** The result of the last turn of a session (everything after its last user message). */
export function summarizeTurn(input: TurnInput): DelegateResult {
  const lastUser = input.messages.map((m) => m.info.role).lastIndexOf('user');
  const turn = input.messages.slice(lastUser + 1).filter((m) => m.info.role === 'assistant');
  const steps: DelegateStep[] = [];
  const files = new Set<string>();
  const tokens = { input: 0, output: 0, reasoning: 0 };
  let tokensKnown = false;
  let error: string | undefined;
  for (const message of turn) {
    const info = message.info as AssistantMessage;
    if (info.tokens && info.tokens.input + info.tokens.output > 0) {
      tokensKnown = true;
      tokens.input += info.tokens.input;
      tokens.output += info.tokens.output;
      tokens.reasoning += info.tokens.reasoning;
    }
    if (info.error !== undefined && info.error.name !== 'MessageAbortedError') error = errorText(info.error);
    for (const part of message.parts) {
      if (part.type !== 'tool') continue;
      const state = part.state;
      const title =
        state.status === 'completed' || state.status === 'running'
          ? state.title
          : state.status === 'error'
            ? state.error.split('\n')[0]?.slice(0, 200)
            : undefined;
      steps.push({ type: 'tool', tool: part.tool, ...(title ? { title } : {}), status: state.status });
      const key = FILE_TOOLS[part.tool];
      const path = key === undefined ? undefined : state.input[key];
      if (state.status === 'completed' && typeof path === 'string') {
        files.add(isAbsolute(path) ? path : resolve(input.directory, path));
      }
      const patched =
        state.status === 'completed' ? (state.metadata as { files?: unknown }).files : undefined;
      if (part.tool === 'apply_patch' && Array.isArray(patched)) {
        for (const f of patched) {
          const p = typeof f === 'string' ? f : (f as { filePath?: string }).filePath;
          if (typeof p === 'string') files.add(isAbsolute(p) ? p : resolve(input.directory, p));
        }
      }
    }
  }
  const last = turn.at(-1);
  const text = (last?.parts ?? [])
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text' && p.synthetic !== true)
    .map((p) => p.text)
    .join('\n')
    .trim();
  steps.push(...input.rejected);
  const status: DelegateResult['status'] =
    input.stopReason ?? (error !== undefined ? 'error' : turn.length === 0 ? 'error' : 'success');
  if (status === 'error' && error === undefined) {
    error = input.streamError
      ? `OpenCode's event stream failed: ${input.streamError}`
      : 'OpenCode produced no answer.';
  }
  if (input.stopReason === 'error' && input.failure !== undefined) error = input.failure;
  if (input.stopReason === 'timeout') error ??= 'The task ran out of time (timeout_s) and was aborted.';
  if (input.stopReason === 'cancelled') error ??= 'The task was cancelled and aborted.';
  return {
    status,
    session_id: input.sessionID,
    output: capOutput(text, input.cap),
    steps,
    files_changed: [...files],
    ...(tokensKnown ? { tokens } : {}),
    ...(error === undefined ? {} : { error }),
  };
}
