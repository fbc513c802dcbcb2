/**
 * How text typed into a shell becomes lines it runs. Under a policy only whole lines are checked, so the
 * engine must know exactly which line a submitting byte runs: keys that edit the line or recall history
 * (cursor keys, Tab completion, Backspace, Ctrl+U/W/K/Y/R/P/O …) rewrite it after it was checked, and are
 * refused instead of being modelled.
 */

/** Bytes the terminal turns into signals (Ctrl+C, Ctrl+Z, Ctrl+\\): they reach no program as input. */
const SIGNAL_BYTES: ReadonlySet<string> = new Set(['\x03', '\x1a', '\x1c']);

/** Bytes that submit the line typed so far (Enter is CR; Ctrl+J is LF). */
const SUBMIT_BYTES: ReadonlySet<string> = new Set(['\r', '\n']);

/** What typing some bytes into a shell does, as far as the policy can tell. */
export interface TypedLines {
  /** Each complete line the bytes submit (the pending text first), in order. */
  readonly lines: readonly string[];
  /** The unsubmitted text on the line afterwards. */
  readonly pending: string;
  /** The first key that edits the line or recalls history, when one is present (then nothing may be sent). */
  readonly refusedKey: string | undefined;
  /** True when the bytes are only signal keys (Ctrl+C, Ctrl+Z, Ctrl+\\), which no reader receives. */
  readonly onlySignals: boolean;
}

/** Splits `bytes` typed after `pending` into submitted lines, following the rules above. */
export function typedLines(pending: string, bytes: string): TypedLines {
  const lines: string[] = [];
  let line = pending;
  let refusedKey: string | undefined;
  let onlySignals = bytes.length > 0;
  for (const ch of bytes) {
    if (!SIGNAL_BYTES.has(ch)) onlySignals = false;
    if (SUBMIT_BYTES.has(ch)) {
      lines.push(line);
      line = '';
    } else if (ch === '\x03') {
      line = ''; // Ctrl+C abandons the line
    } else if (SIGNAL_BYTES.has(ch) || ch === '\x0c') {
      // a signal, or Ctrl+L (redraw): the line stays as it is
    } else if (ch === '\x04' && line === '') {
      // Ctrl+D on an empty line: end of input
    } else if (isPrintable(ch)) {
      line += ch;
    } else {
      refusedKey ??= describeKey(ch);
    }
  }
  return { lines, pending: line, refusedKey, onlySignals };
}

function isPrintable(ch: string): boolean {
  const code = ch.codePointAt(0) ?? 0;
  return code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code <= 0x9f);
}

function describeKey(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === '\x1b') return 'an escape sequence (a cursor, Home/End, Delete, history or Alt key)';
  if (ch === '\t') return 'Tab (completion rewrites the line)';
  if (ch === '\x7f' || ch === '\x08') return 'Backspace';
  if (ch === '\x0f') return 'Ctrl+O (runs the line and loads the next one from history)';
  if (ch === '\x04') return 'Ctrl+D on a non-empty line';
  if (code < 0x20) return `Ctrl+${String.fromCharCode(code + 0x40)}`;
  return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
