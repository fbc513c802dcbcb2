/**
 * The CLI's arguments must be text: Node decodes argv as UTF-8 and silently replaces bytes that are not
 * (with U+FFFD), so a command line naming a file `a\xffb` would act on another file. On Linux the raw
 * bytes are in /proc/self/cmdline: an argument whose bytes are not valid UTF-8 is found there and refused,
 * naming it and showing the bytes. Where /proc cannot tell, arguments are taken as Node decoded them.
 */

import { readFileSync } from 'node:fs';

/** One argument whose bytes are not UTF-8. */
export interface NonUtf8Argument {
  /** Its position among the CLI's arguments (0 = the first after the program). */
  index: number;
  /** Its bytes, printable: ASCII as is, every other byte as `\xHH`. */
  shown: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Shows bytes with every byte outside printable ASCII as `\xHH`. */
function showBytes(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes)
    out +=
      byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  return out;
}

/**
 * The arguments (of the `count` last of this process's argv) whose raw bytes are not valid UTF-8, or an
 * empty list when they all are or /proc cannot tell.
 */
export function nonUtf8Arguments(count: number, cmdlinePath = '/proc/self/cmdline'): NonUtf8Argument[] {
  let raw: Buffer;
  try {
    raw = readFileSync(cmdlinePath);
  } catch {
    return [];
  }
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      parts.push(raw.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < raw.length) parts.push(raw.subarray(start));
  const args = parts.slice(Math.max(0, parts.length - count));
  const found: NonUtf8Argument[] = [];
  args.forEach((bytes, index) => {
    try {
      decoder.decode(bytes);
    } catch {
      found.push({ index, shown: showBytes(bytes) });
    }
  });
  return found;
}
