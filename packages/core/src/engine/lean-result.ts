/**
 * The CommandResult as a face sends it (docs/tools.md): the engine's result without the fields that carry
 * nothing, so that an agent pays only for what tells it something.
 */

import type { CommandResult, OutputInfo } from '../types.js';

/** A CommandResult whose `output_info` is present only when the output was cut. */
export type LeanCommandResult = Omit<CommandResult, 'output_info'> & { output_info?: OutputInfo };

/**
 * Drops what carries nothing: `signal` when null, `isolated` unless true, and `output_info` when this
 * call's output was not cut (it then holds only counts the output itself shows). Always kept: `status`,
 * `state`, `reason`, `command_id`, `session_id`, `output`, `duration_ms`, and `exit_code` on a completed
 * command (`null` there means unknown, which is information). Every other field is copied as is.
 */
export function leanCommandResult(result: CommandResult): LeanCommandResult {
  const lean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(result)) {
    if (value === undefined) continue;
    if (key === 'signal' && value === null) continue;
    if (key === 'isolated' && value !== true) continue;
    if (key === 'output_info' && !result.output_info.truncated) continue;
    lean[key] = value;
  }
  if (result.status === 'completed' && lean.exit_code === undefined) lean.exit_code = null;
  return lean as LeanCommandResult;
}
