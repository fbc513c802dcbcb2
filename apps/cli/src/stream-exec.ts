/**
 * `conch exec` on a terminal: the command's output is streamed as it arrives instead of printed when the
 * wait ends. The command starts with a zero pause (the call returns at once with its id unless it already
 * finished), its raw output is followed over the daemon connection (`conch/follow`) from its first byte, and
 * `read_output` waits with the person's `--pause`/`--total`. A spinner with the elapsed time shows until the
 * first output arrives. Only the status line is printed at the end (the output has been shown).
 *
 * Ctrl+C ends the wait, not the command (as for every conch call): {@link ExecInterrupted} carries the
 * command's id so that the person is told how to read or kill it. Output the terminal did not keep up with
 * (the daemon drops it rather than queue it without bound) is said, with where to read it.
 */

import { ATTACH_METHODS } from './attach-methods.js';
import type { DaemonRpc } from './daemon-rpc.js';
import type { CommandResult } from './render.js';
import { startSpinner } from './terminal-output.js';
import { callTool } from './tool-call.js';

/** Whether `conch exec` streams: stdout is a terminal and neither `--json`, `--background` nor `--until`. */
export function streamsExec(options: { json?: boolean; background?: boolean; until?: string }): boolean {
  return (
    process.stdout.isTTY === true &&
    options.json !== true &&
    options.background !== true &&
    options.until === undefined
  );
}

/** The person pressed ctrl+c while `conch exec` streamed: the command runs on. */
export class ExecInterrupted extends Error {
  constructor(readonly commandId: string) {
    super(`interrupted; ${commandId} is still running`);
  }
}

/**
 * Runs `execute` (its `args` without the wait options) and streams the output to stdout; resolves with the
 * final result, whose `output` is emptied when it was streamed. Rejects with {@link ExecInterrupted} on
 * ctrl+c (SIGINT) once the command has an id.
 */
export async function execStreaming(
  client: DaemonRpc,
  args: Record<string, unknown>,
  wait: Record<string, unknown>,
  label: string,
): Promise<CommandResult> {
  const spinner = startSpinner(label);
  let spinning = true;
  const stopSpinner = () => {
    if (spinning) spinner.stop();
    spinning = false;
  };
  let interrupt: () => void = () => {};
  const interrupted = new Promise<'interrupted'>((resolve) => {
    interrupt = () => resolve('interrupted');
  });
  process.on('SIGINT', interrupt);
  try {
    const first = await callTool<CommandResult>(client, 'execute', { ...args, pause_timeout: 0 });
    if (first.status === 'completed') return first;
    const followId = globalThis.crypto.randomUUID(); // node:crypto would load at every start
    let streamed = false;
    let lastChar = '\n';
    client.onNotification(ATTACH_METHODS.commandOutput, (params) => {
      const text = typeof params.text === 'string' ? params.text : '';
      if (params.follow_id !== followId || text === '') return;
      stopSpinner();
      streamed = true;
      process.stdout.write(text);
      lastChar = text.at(-1) ?? lastChar;
    });
    client.onNotification(ATTACH_METHODS.dropped, (params) => {
      if (params.follow_id !== followId) return;
      stopSpinner();
      process.stderr.write(
        `\r\n[conch: ${Number(params.bytes)} bytes of output not shown here (this terminal did not keep up); conch read ${first.command_id} --offset 0 shows them]\r\n`,
      );
    });
    await client.request(ATTACH_METHODS.follow, {
      command_id: first.command_id,
      follow_id: followId,
      from_byte: 0,
    });
    let result: CommandResult;
    try {
      const read = callTool<CommandResult>(client, 'read_output', { command_id: first.command_id, ...wait });
      const outcome = await Promise.race([read, interrupted]);
      if (outcome === 'interrupted') {
        read.catch(() => {});
        throw new ExecInterrupted(first.command_id);
      }
      result = outcome;
    } finally {
      // Its reply comes after every output notification sent before it (one ordered connection).
      await client.request(ATTACH_METHODS.unfollow, { follow_id: followId }).catch(() => {});
    }
    if (streamed && lastChar !== '\n') process.stdout.write('\r\n');
    return streamed ? { ...result, output: '' } : result;
  } finally {
    process.off('SIGINT', interrupt);
    stopSpinner();
  }
}
