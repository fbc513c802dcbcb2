/**
 * The rule that keeps a listing of commands bounded: each command's text is cut to its share of the
 * listing's characters ({@link EngineLimits.listedCommandChars} at most, less when many commands share
 * {@link EngineLimits.listingChars}), and the cut is stated: the text ends in `…` and `command_chars` gives
 * the whole length. The full text stays with the command (the `filter` of a listing matches all of it).
 */

import type { ProcessInfo } from '../types.js';
import type { EngineLimits } from './limits.js';

/** The fewest characters a row keeps, whatever the number of rows. */
const MIN_ROW_CHARS = 40;

/** Cuts the command texts of `processes` per the rule of the module doc (a new array; rows are copied). */
export function cutListedCommands(
  processes: readonly ProcessInfo[],
  limits: Pick<EngineLimits, 'listedCommandChars' | 'listingChars'>,
): ProcessInfo[] {
  const share = Math.floor(limits.listingChars / Math.max(1, processes.length));
  const perRow = Math.max(MIN_ROW_CHARS, Math.min(limits.listedCommandChars, share));
  return processes.map((p) => {
    if (p.command.length <= perRow) return p;
    // Never split a surrogate pair: the cut text stays valid UTF-16.
    let end = perRow - 1;
    const last = p.command.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
    return { ...p, command: `${p.command.slice(0, end)}…`, command_chars: p.command.length };
  });
}
