import type { SessionManager } from '../engine/session-manager.js';
import type { CommandResult } from '../types.js';

/**
 * Reads a command until it completes (`read_output` calls of up to `pauseS` seconds each) and returns the
 * completed result with `output` holding what every call returned, in order: a command may complete within
 * its first call or after it (a background command's start-up probe), and each call returns only output
 * the calls before it did not.
 */
export async function readToEnd(
  manager: SessionManager,
  first: CommandResult,
  pauseS = 5,
): Promise<CommandResult> {
  let done = first;
  const output = [first.output];
  while (done.status !== 'completed') {
    done = await manager.readOutput({ command_id: first.command_id, pause_timeout: pauseS });
    output.push(done.output);
  }
  return { ...done, output: output.filter((o) => o !== '').join('\n') };
}
