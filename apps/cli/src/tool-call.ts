/**
 * One tool call from the CLI to the daemon: progress shown by a spinner (the newest output line and the
 * elapsed time, TTY only), ctrl+c cancels the wait (the command keeps running), and the result comes back
 * as `{ structured, isError }`. Errors, hints and omission notices arrive worded for the CLI: the CLI
 * declares {@link CLI_VOCABULARY} when it connects (see daemon-client.ts) and the daemon words them so.
 */

import type { Vocabulary } from '@conch/core';
import type { DaemonRpc } from './daemon-rpc.js';
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

/**
 * The CLI command of each verb that hints point at (`create_local` has no CLI command of its own: a
 * command runs in a session `conch exec` creates). Declared to the daemon when the CLI connects.
 */
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

/** Calls `name` and returns its structured result; throws {@link ConchCliError} for a tool error. */
export async function callTool<T = Record<string, unknown>>(
  client: DaemonRpc,
  name: string,
  args: Record<string, unknown>,
  options: { spinner?: string } = {},
): Promise<T> {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  const spinner = options.spinner === undefined ? undefined : startSpinner(options.spinner);
  if (spinner) process.once('SIGINT', onSigint);
  try {
    // No request timeout: the daemon bounds every wait itself (total_timeout).
    const result = await client.callTool(name, args, {
      signal: controller.signal,
      ...(spinner ? { onprogress: (progress) => spinner.update(progress.message ?? '') } : {}),
    });
    const structured = result.structuredContent;
    if (result.isError) {
      const error = (structured?.error as ToolError | undefined) ?? {
        code: 'INTERNAL',
        message: result.content.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('\n'),
      };
      throw new ConchCliError(error, structured);
    }
    return (structured ?? {}) as T;
  } finally {
    spinner?.stop();
    process.off('SIGINT', onSigint);
  }
}
