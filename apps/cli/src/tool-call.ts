/**
 * One tool call from the CLI to the daemon: progress shown by a spinner (the newest output line and the
 * elapsed time, TTY only), ctrl+c cancels the wait (the command keeps running), and the result comes back
 * as `{ structured, isError }` with errors worded for the CLI.
 */

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSpinner } from './terminal-output.js';

/** A tool error in the shape every conch tool returns. */
export interface ToolError {
  code: string;
  message: string;
  hint?: string;
}

/** A conch error the CLI reports with exit code 1. */
export class ConchCliError extends Error {
  constructor(
    readonly error: ToolError,
    readonly structured: unknown,
  ) {
    super(error.message);
  }
}

/** MCP tool names as they appear in hints, and the CLI command that does the same. */
const CLI_WORDS: Record<string, string> = {
  kill_process: 'conch kill',
  read_output: 'conch read',
  respond: 'conch respond',
  send_control: 'conch key',
  list_processes: 'conch ps',
  list_sessions: 'conch sessions',
  close_session: 'conch close',
  check_command: 'conch check',
  connect_ssh: 'conch ssh',
  execute: 'conch exec',
};

/** Rewords a message or hint that names MCP tools into CLI commands. */
export function inCliWords(text: string): string {
  return text.replace(
    /`?\b(kill_process|read_output|respond|send_control|list_processes|list_sessions|close_session|check_command|connect_ssh|execute)\b`?(?=[\s.,;:)(]|$)/g,
    (match, name: string) =>
      match.startsWith('`') || match.endsWith('`') ? `\`${CLI_WORDS[name]}\`` : (CLI_WORDS[name] ?? name),
  );
}

/** The request timeout: the server bounds every wait itself (total_timeout), so the SDK's must not cut it. */
const REQUEST_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Calls `name` and returns its structured result; throws {@link ConchCliError} for a tool error. */
export async function callTool<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { spinner?: string } = {},
): Promise<T> {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  const spinner = options.spinner === undefined ? undefined : startSpinner(options.spinner);
  if (spinner) process.once('SIGINT', onSigint);
  try {
    const result = (await client.callTool({ name, arguments: args }, undefined, {
      signal: controller.signal,
      timeout: REQUEST_TIMEOUT_MS,
      ...(spinner ? { onprogress: (progress) => spinner.update(progress.message ?? '') } : {}),
    })) as CallToolResult;
    const structured = result.structuredContent as Record<string, unknown> | undefined;
    if (result.isError) {
      const error = (structured?.error as ToolError | undefined) ?? {
        code: 'INTERNAL',
        message: result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n'),
      };
      throw new ConchCliError(
        {
          ...error,
          message: inCliWords(error.message),
          ...(error.hint ? { hint: inCliWords(error.hint) } : {}),
        },
        structured,
      );
    }
    return (structured ?? {}) as T;
  } finally {
    spinner?.stop();
    process.off('SIGINT', onSigint);
  }
}
