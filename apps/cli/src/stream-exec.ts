/**
 * `conch exec` on a terminal: the command's output is streamed as it arrives instead of printed when the
 * wait ends. The command starts with a zero pause (the call returns at once with its id unless it already
 * finished), its raw output is followed over the daemon connection (`conch/follow`) from its first byte, and
 * `read_output` waits with the person's `--pause`/`--total`. A spinner with the elapsed time shows until the
 * first output arrives. Only the status line is printed at the end (the output has been shown).
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

/**
 * Runs `execute` (its `args` without the wait options) and streams the output to stdout; resolves with the
 * final result, whose `output` is emptied when it was streamed.
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
    await client.request(ATTACH_METHODS.follow, {
      command_id: first.command_id,
      follow_id: followId,
      from_byte: 0,
    });
    let result: CommandResult;
    try {
      result = await callTool<CommandResult>(client, 'read_output', {
        command_id: first.command_id,
        ...wait,
      });
    } finally {
      // Its reply comes after every output notification sent before it (one ordered connection).
      await client.request(ATTACH_METHODS.unfollow, { follow_id: followId }).catch(() => {});
    }
    if (streamed && lastChar !== '\n') process.stdout.write('\r\n');
    return streamed ? { ...result, output: '' } : result;
  } finally {
    stopSpinner();
  }
}
