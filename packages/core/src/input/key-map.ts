/**
 * KeyMap: turns the key names of docs/tools.md (`send_control`) into the bytes a real xterm sends.
 *
 * Grammar (after removing all whitespace): tokens separated by `+` or `-` (equivalent); every token but
 * the last is a modifier (`ctrl`/`control`/`c`, `alt`/`meta`/`m`/`option`, `shift`/`s`), the last is the key:
 * a key name (case-insensitive) or one character. `^X` means `ctrl+X`, so `^C`, `C-c`, `Ctrl + C` and
 * `ctrl-c` are all the same key. A lone character without modifiers is sent as typed (case kept: `G` and
 * `g` differ in vim); with modifiers a letter is case-insensitive and `shift` selects the capital.
 *
 * Pure: no I/O. Application-cursor mode (DECCKM) comes from the caller, e.g. from
 * {@link CursorKeyModeTracker} fed with the terminal's output.
 */

import { ConchError, ErrorCode } from '../errors.js';
import { hint, verb } from '../hint.js';

/** Options for {@link encodeKeys}. */
export interface KeyEncodeOptions {
  /**
   * The terminal's application-cursor mode (DECCKM, `ESC [ ? 1 h`): arrows and home/end are sent as
   * `SS3 A` instead of `CSI A`, as a real xterm does for vim, less and readline in keypad mode.
   */
  applicationCursor: boolean;
}

/** Modifier flags of a parsed key. */
export interface KeyModifiers {
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
}

/** A key name parsed into its modifiers and base key (a canonical key name or one character). */
export interface ParsedKey extends KeyModifiers {
  /** Canonical name of a named key (`up`, `f5`, `tab`…) or the single character of a character key. */
  key: string;
  /** True when `key` is a single character rather than a named key. */
  isChar: boolean;
}

const ESC = '\x1b';
const CSI = '\x1b[';
const SS3 = '\x1bO';

/** Named keys sent as a cursor/keypad sequence (they take xterm's `;modifier` parameter). */
type FunctionKeySpec =
  | { form: 'cursor'; final: string } // CSI final / SS3 final (DECCKM), CSI 1;m final with modifiers
  | { form: 'ss3'; final: string } // F1-F4: SS3 final, CSI 1;m final with modifiers
  | { form: 'tilde'; code: number }; // CSI code ~, CSI code;m ~ with modifiers

const FUNCTION_KEYS: Readonly<Record<string, FunctionKeySpec>> = {
  up: { form: 'cursor', final: 'A' },
  down: { form: 'cursor', final: 'B' },
  right: { form: 'cursor', final: 'C' },
  left: { form: 'cursor', final: 'D' },
  home: { form: 'cursor', final: 'H' },
  end: { form: 'cursor', final: 'F' },
  insert: { form: 'tilde', code: 2 },
  delete: { form: 'tilde', code: 3 },
  pageup: { form: 'tilde', code: 5 },
  pagedown: { form: 'tilde', code: 6 },
  f1: { form: 'ss3', final: 'P' },
  f2: { form: 'ss3', final: 'Q' },
  f3: { form: 'ss3', final: 'R' },
  f4: { form: 'ss3', final: 'S' },
  f5: { form: 'tilde', code: 15 },
  f6: { form: 'tilde', code: 17 },
  f7: { form: 'tilde', code: 18 },
  f8: { form: 'tilde', code: 19 },
  f9: { form: 'tilde', code: 20 },
  f10: { form: 'tilde', code: 21 },
  f11: { form: 'tilde', code: 23 },
  f12: { form: 'tilde', code: 24 },
};

/** Keys that send one plain byte (and an ESC prefix with alt). */
const PLAIN_KEYS: Readonly<Record<string, string>> = {
  esc: ESC,
  tab: '\t',
  enter: '\r',
  space: ' ',
  backspace: '\x7f',
};

/** Aliases of key names → canonical names. */
const KEY_ALIASES: Readonly<Record<string, string>> = {
  escape: 'esc',
  return: 'enter',
  del: 'delete',
  ins: 'insert',
  pgup: 'pageup',
  pgdn: 'pagedown',
  page_up: 'pageup',
  page_down: 'pagedown',
  arrowup: 'up',
  arrowdown: 'down',
  arrowleft: 'left',
  arrowright: 'right',
  backtab: 'shift+tab',
};

/** Modifier tokens → modifier. `c`, `m` and `s` are the emacs spellings (`C-x`, `M-x`, `S-tab`). */
const MODIFIERS: Readonly<Record<string, keyof KeyModifiers>> = {
  ctrl: 'ctrl',
  control: 'ctrl',
  ctl: 'ctrl',
  c: 'ctrl',
  alt: 'alt',
  meta: 'alt',
  option: 'alt',
  opt: 'alt',
  m: 'alt',
  shift: 'shift',
  s: 'shift',
};

/** Characters that have a control code with ctrl (besides letters): xterm's C0 mapping. */
const CTRL_PUNCTUATION: Readonly<Record<string, number>> = {
  '@': 0x00,
  '[': 0x1b,
  '\\': 0x1c,
  ']': 0x1d,
  '^': 0x1e,
  _: 0x1f,
  '/': 0x1f,
  '?': 0x7f,
};

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * Every key name accepted by {@link encodeKeys}, canonical names first, then aliases. Besides these,
 * `alt+<char>` (ESC + char), any single printable character, modifier combinations of the cursor and
 * function keys (xterm `CSI 1;5A` style: shift, alt, ctrl) and the `C-x` / `^X` / `M-x` spellings are valid.
 */
export const KEY_NAMES: readonly string[] = Object.freeze([
  ...Array.from(LETTERS, (l) => `ctrl+${l}`),
  'ctrl+[',
  'ctrl+\\',
  'ctrl+]',
  'ctrl+^',
  'ctrl+_',
  'ctrl+@',
  'ctrl+space',
  'ctrl+?',
  'ctrl+/',
  'esc',
  'tab',
  'shift+tab',
  'enter',
  'space',
  'backspace',
  'delete',
  'insert',
  'up',
  'down',
  'left',
  'right',
  'home',
  'end',
  'pageup',
  'pagedown',
  ...Array.from({ length: 12 }, (_, i) => `f${i + 1}`),
  'alt+<char>',
  ...Object.keys(KEY_ALIASES),
]);

/** A compact, human-readable list of the valid key names, used in error messages. */
export const VALID_KEYS_DESCRIPTION =
  'ctrl+a…ctrl+z, ctrl+[ ctrl+\\ ctrl+] ctrl+^ ctrl+_ ctrl+@ ctrl+space ctrl+?, esc (escape), tab, shift+tab, ' +
  'enter (return), space, backspace, delete, insert, up, down, left, right, home, end, pageup, pagedown, ' +
  'f1…f12, alt+<char>, or one printable character; "-" and "+" are equivalent, case and spaces are ignored, ' +
  'C-x and ^X mean ctrl+x, and shift/alt/ctrl combine with arrows, home/end, pageup/pagedown, insert/delete ' +
  'and f1…f12 (e.g. ctrl+left)';

function invalidKey(name: unknown, why: string): ConchError {
  const shown = typeof name === 'string' ? JSON.stringify(name) : String(name);
  return new ConchError(
    ErrorCode.INVALID_ARGUMENT,
    `Unknown key ${shown} (${why}). Valid keys: ${VALID_KEYS_DESCRIPTION}.`,
    {
      hint: hint`To type text, use ${verb('respond')} instead of ${verb('sendControl')}.`,
      data: { key: typeof name === 'string' ? name : shown, valid: KEY_NAMES },
    },
  );
}

/** Splits on `+`/`-` separators; a separator at the start of a token is the character itself (`ctrl+-`). */
function tokenize(compact: string): string[] | undefined {
  const tokens: string[] = [];
  let current = '';
  for (const ch of compact) {
    if ((ch === '+' || ch === '-') && current !== '') {
      tokens.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current === '') return undefined; // empty name or a trailing separator
  tokens.push(current);
  return tokens;
}

/**
 * Parses one key name into modifiers and a base key. Throws a `INVALID_ARGUMENT` {@link ConchError} whose
 * message names the bad value and lists the valid names.
 */
export function parseKey(name: string): ParsedKey {
  if (typeof name !== 'string') throw invalidKey(name, 'not a string');
  const compact = name.replace(/\s+/g, '');
  const tokens = tokenize(compact);
  if (tokens === undefined) throw invalidKey(name, 'empty key or trailing separator');
  const mods: KeyModifiers = { ctrl: false, alt: false, shift: false };
  for (const token of tokens.slice(0, -1)) {
    const mod = MODIFIERS[token.toLowerCase()];
    if (mod === undefined) throw invalidKey(name, `"${token}" is not a modifier`);
    mods[mod] = true;
  }
  let last = tokens[tokens.length - 1]!;
  // ^X = ctrl+X (a lone "^" is the caret character).
  if (last.length > 1 && last.startsWith('^') && [...last].length === 2) {
    mods.ctrl = true;
    last = last.slice(1);
  }
  const chars = [...last];
  if (chars.length === 1) {
    const ch = chars[0]!;
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)) {
      throw invalidKey(name, 'control characters are not key names');
    }
    return { ...mods, key: ch, isChar: true };
  }
  const lower = last.toLowerCase();
  const canonical = KEY_ALIASES[lower] ?? lower;
  if (canonical === 'shift+tab') return { ...mods, shift: true, key: 'tab', isChar: false };
  if (canonical in PLAIN_KEYS || canonical in FUNCTION_KEYS)
    return { ...mods, key: canonical, isChar: false };
  throw invalidKey(name, `"${last}" is not a key name`);
}

function modifierParam(mods: KeyModifiers): number {
  return 1 + (mods.shift ? 1 : 0) + (mods.alt ? 2 : 0) + (mods.ctrl ? 4 : 0);
}

function encodeFunctionKey(spec: FunctionKeySpec, mods: KeyModifiers, applicationCursor: boolean): string {
  const m = modifierParam(mods);
  switch (spec.form) {
    case 'cursor':
      if (m > 1) return `${CSI}1;${m}${spec.final}`;
      return (applicationCursor ? SS3 : CSI) + spec.final;
    case 'ss3':
      return m > 1 ? `${CSI}1;${m}${spec.final}` : SS3 + spec.final;
    case 'tilde':
      return m > 1 ? `${CSI}${spec.code};${m}~` : `${CSI}${spec.code}~`;
  }
}

function encodePlainKey(parsed: ParsedKey, name: string): string {
  const { key, ctrl, alt, shift } = parsed;
  const prefix = alt ? ESC : '';
  if (key === 'tab') {
    if (shift && !ctrl && !alt) return `${CSI}Z`;
    if (!shift && !ctrl) return prefix + '\t';
  } else if (key === 'space') {
    if (!shift) return prefix + (ctrl ? '\x00' : ' ');
  } else if (key === 'backspace') {
    if (!shift) return prefix + (ctrl ? '\x08' : '\x7f');
  } else if (!shift && !ctrl) {
    return prefix + PLAIN_KEYS[key]!;
  }
  throw invalidKey(name, `this modifier combination has no ${key} sequence`);
}

function encodeCharKey(parsed: ParsedKey, name: string): string {
  const { ctrl, alt, shift } = parsed;
  let ch = parsed.key;
  const prefix = alt ? ESC : '';
  if (!ctrl && !alt && !shift) return ch; // a lone character is sent as typed
  const lower = ch.toLowerCase();
  const isLetter = lower.length === 1 && LETTERS.includes(lower);
  if (isLetter) ch = shift ? lower.toUpperCase() : lower;
  else if (shift) throw invalidKey(name, 'shift combines only with letters and named keys');
  if (!ctrl) return prefix + ch;
  if (isLetter) return prefix + String.fromCharCode(lower.charCodeAt(0) & 0x1f);
  const control = CTRL_PUNCTUATION[ch];
  if (control === undefined) throw invalidKey(name, `ctrl+${ch} has no control code`);
  return prefix + String.fromCharCode(control);
}

/** Encodes one parsed key. */
function encodeParsed(parsed: ParsedKey, name: string, opts: KeyEncodeOptions): string {
  if (parsed.isChar) return encodeCharKey(parsed, name);
  const fn = FUNCTION_KEYS[parsed.key];
  if (fn !== undefined) return encodeFunctionKey(fn, parsed, opts.applicationCursor);
  return encodePlainKey(parsed, name);
}

/** Encodes one key name into the bytes an xterm sends. Throws `INVALID_ARGUMENT` for unknown names. */
export function encodeKey(name: string, opts: KeyEncodeOptions): string {
  return encodeParsed(parseKey(name), name, opts);
}

/**
 * Encodes one key name or an array of them into the bytes a real xterm sends (docs/tools.md "Keys").
 * All names are validated first: if any is unknown, an `INVALID_ARGUMENT` {@link ConchError} naming it and
 * listing the valid names is thrown and nothing is encoded.
 */
export function encodeKeys(names: string | readonly string[], opts: KeyEncodeOptions): string {
  const list = typeof names === 'string' ? [names] : names;
  if (!Array.isArray(list)) throw invalidKey(names, 'expected a key name or an array of key names');
  if (list.length === 0) {
    throw new ConchError(ErrorCode.INVALID_ARGUMENT, `No key given. Valid keys: ${VALID_KEYS_DESCRIPTION}.`, {
      data: { valid: KEY_NAMES },
    });
  }
  const encoded = list.map((name) => encodeParsed(parseKey(name), name, opts)); // throws before any output
  return encoded.join('');
}

/** True when `name` is a valid key name for {@link encodeKeys}. */
export function isValidKey(name: string): boolean {
  try {
    encodeKey(name, { applicationCursor: false });
    return true;
  } catch {
    return false;
  }
}

/** Signal names a terminal's line discipline raises for a key (with default `stty` settings). */
export type KeySignal = 'SIGINT' | 'SIGQUIT' | 'SIGTSTP';

/**
 * The signal the terminal raises for this key with default settings: `SIGINT` for ctrl+c, `SIGQUIT` for
 * ctrl+\, `SIGTSTP` for ctrl+z; otherwise (or for an invalid name) undefined. For reporting only.
 */
export function signalForKey(name: string): KeySignal | undefined {
  let bytes: string;
  try {
    bytes = encodeKey(name, { applicationCursor: false });
  } catch {
    return undefined;
  }
  if (bytes === '\x03') return 'SIGINT';
  if (bytes === '\x1c') return 'SIGQUIT';
  if (bytes === '\x1a') return 'SIGTSTP';
  return undefined;
}

/**
 * Follows a terminal's application-cursor mode (DECCKM) from its output bytes: `ESC [ ? 1 h` sets it,
 * `ESC [ ? 1 l`, a hard reset (`ESC c`) and a soft reset (`ESC [ ! p`) clear it. Sequences split across
 * chunks are handled. Linear in the input; keeps only a few bytes of state.
 */
export class CursorKeyModeTracker {
  #applicationCursor = false;
  #state: 'ground' | 'esc' | 'csi' = 'ground';
  #private = false;
  #bang = false;
  #params = '';

  /** Whether arrows should currently be sent in application mode (`SS3 A`). */
  get applicationCursor(): boolean {
    return this.#applicationCursor;
  }

  /** Feeds terminal output (bytes or already-decoded text). */
  write(chunk: Uint8Array | string): void {
    const isText = typeof chunk === 'string';
    for (let i = 0; i < chunk.length; i++) {
      const c = isText ? chunk.charCodeAt(i) : chunk[i]!;
      this.#step(c);
    }
  }

  #step(c: number): void {
    if (c === 0x1b) {
      this.#state = 'esc';
      return;
    }
    switch (this.#state) {
      case 'ground':
        return;
      case 'esc':
        if (c === 0x5b) {
          this.#state = 'csi';
          this.#private = false;
          this.#bang = false;
          this.#params = '';
        } else {
          if (c === 0x63) this.#applicationCursor = false; // ESC c: RIS
          this.#state = 'ground';
        }
        return;
      case 'csi':
        if (c === 0x3f && this.#params === '' && !this.#private) this.#private = true;
        else if (c === 0x21) this.#bang = true;
        else if ((c >= 0x30 && c <= 0x39) || c === 0x3b) {
          if (this.#params.length < 64) this.#params += String.fromCharCode(c);
        } else if (c >= 0x40 && c <= 0x7e) {
          this.#finish(c);
          this.#state = 'ground';
        } else if (c < 0x20 || c > 0x7e) {
          this.#state = 'ground';
        }
        return;
    }
  }

  #finish(final: number): void {
    if (this.#bang && final === 0x70) {
      this.#applicationCursor = false; // DECSTR
      return;
    }
    if (!this.#private || (final !== 0x68 && final !== 0x6c)) return;
    if (this.#params.split(';').includes('1')) this.#applicationCursor = final === 0x68;
  }
}

/** The KeyMap API in one object: encode key names, list them, and name the signals they raise. */
export const KeyMap = Object.freeze({
  encode: encodeKeys,
  encodeKey,
  parse: parseKey,
  isValid: isValidKey,
  signalFor: signalForKey,
  names: KEY_NAMES,
});
