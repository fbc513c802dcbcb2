/**
 * One tool call from the CLI to the daemon: progress shown by a spinner (the newest output line and the
 * elapsed time, TTY only), ctrl+c cancels the wait (the command keeps running), and the result comes back
 * as `{ structured, isError }` with errors worded for the CLI.
 */

import { VERBS, type Vocabulary } from '@conch/core';
import { MCP_VOCABULARY } from '@conch/mcp';
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

/** The CLI command of each verb that hints point at (`create_local` has no CLI command of its own). */
export const CLI_VOCABULARY: Vocabulary = {
  createLocal: 'conch exec',
  connectSsh: 'conch ssh',
  listSessions: 'conch sessions',
  closeSession: 'conch close',
  execute: 'conch exec',
  readOutput: 'conch read',
  respond: 'conch respond',
  sendControl: 'conch key',
  listProcesses: 'conch ps',
  killProcess: 'conch kill',
  checkCommand: 'conch check',
};

/**
 * MCP tool names as they appear in hints (the CLI talks to the MCP face), and the CLI command that does
 * the same: both from the vocabularies.
 */
const CLI_WORDS: Record<string, string> = Object.fromEntries(
  VERBS.filter((verb) => verb !== 'createLocal').map((verb) => [MCP_VOCABULARY[verb], CLI_VOCABULARY[verb]]),
);

/** A tool name of {@link CLI_WORDS}, optionally in backticks, followed by punctuation, a space or the end. */
const CLI_WORDS_PATTERN = new RegExp(
  `\`?\\b(${Object.keys(CLI_WORDS).join('|')})\\b\`?(?=[\\s.,;:)(]|$)`,
  'g',
);

/** Rewords a message or hint that names MCP tools into CLI commands. */
export function inCliWords(text: string): string {
  return text.replace(CLI_WORDS_PATTERN, (match, name: string) =>
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
