/**
 * What a person's keystrokes (relayed by `conch attach`) do to the line a terminal holds for its reader, as
 * far as the bytes tell. Printable characters, Backspace, Ctrl+W and Ctrl+U act the same in the kernel's
 * line discipline and in line editors while the cursor stays at the end of the line, so they are followed
 * exactly; Enter (CR or LF) submits the line and Ctrl+C abandons it. Any other key (a cursor or history
 * key, Tab, Ctrl+R, Alt+…) may rewrite the line in ways not replayed here: the line is then pending and its
 * text approximate until Enter or Ctrl+C. When unsure, the line is pending.
 */

/** The line a person is typing. */
export interface PersonLine {
  /** The text typed so far, as far as known (approximate when not {@link exact}). */
  readonly text: string;
  /** True while the terminal may hold an unfinished line of the person's. */
  readonly pending: boolean;
  /** False once a key was typed whose effect on the line is not followed. */
  readonly exact: boolean;
}

/** No line typed. */
export const EMPTY_LINE: PersonLine = { text: '', pending: false, exact: true };

/** A line the keystrokes submitted (Enter). */
export interface SubmittedLine {
  text: string;
  /** False when keys whose effect is not followed were typed on it (the text is then approximate). */
  exact: boolean;
}

/** Longest line followed: a terminal's line holds 4095 bytes; past it the text is approximate. */
const MAX_LINE_CHARS = 4096;

/** Keys that signal the foreground program (Ctrl+Z, Ctrl+\): they leave the line as it is. */
const SIGNAL_KEYS: ReadonlySet<string> = new Set(['\x1a', '\x1c']);

/** Types `keys` on `line`: the line afterwards, and the lines submitted on the way, in order. */
export function typeKeys(line: PersonLine, keys: string): { line: PersonLine; submitted: SubmittedLine[] } {
  const submitted: SubmittedLine[] = [];
  let { text, pending, exact } = line;
  const unsure = () => {
    pending = true;
    exact = false;
  };
  const chars = [...keys];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '\r' || ch === '\n') {
      submitted.push({ text, exact });
      ({ text, pending, exact } = EMPTY_LINE);
    } else if (ch === '\x03') {
      ({ text, pending, exact } = EMPTY_LINE);
    } else if (SIGNAL_KEYS.has(ch)) {
      // a signal to the foreground program; the line stays
    } else if (ch === '\x04') {
      // Ctrl+D: end of input on an empty line; on a non-empty one the reader gets the text unfinished
    } else if (ch === '\x7f' || ch === '\x08') {
      if (!exact) continue;
      text = [...text].slice(0, -1).join('');
      pending = text !== '';
    } else if (ch === '\x15') {
      if (exact) ({ text, pending, exact } = EMPTY_LINE);
    } else if (ch === '\x17') {
      if (!exact) continue;
      text = text.replace(/\s+$/, '').replace(/\S+$/, '');
      pending = text !== '';
    } else if (ch === '\x1b') {
      // An escape sequence (cursor, history, Alt keys, a paste's brackets): one key, its effect not followed.
      i = escapeEnd(chars, i);
      unsure();
    } else if (isPrintable(ch)) {
      if (text.length < MAX_LINE_CHARS) text += ch;
      else exact = false;
      pending = true;
    } else {
      unsure();
    }
  }
  return { line: { text, pending, exact }, submitted };
}

/** The index of the last character of the escape sequence that starts at `at`. */
function escapeEnd(chars: readonly string[], at: number): number {
  const next = chars[at + 1];
  if (next === undefined) return at;
  if (next !== '[' && next !== 'O') return at + 1;
  let i = at + 2;
  // CSI: parameter and intermediate bytes, then one final byte (0x40–0x7e); SS3: one byte.
  if (next === '[') while (i < chars.length && /[\x20-\x3f]/.test(chars[i]!)) i++;
  return Math.min(i, chars.length - 1);
}

function isPrintable(ch: string): boolean {
  const code = ch.codePointAt(0) ?? 0;
  return (code >= 0x20 && code < 0x7f) || code > 0x9f;
}
