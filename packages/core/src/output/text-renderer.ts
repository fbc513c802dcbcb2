/**
 * Incremental conversion of terminal bytes to the "text" view of docs/output.md: what a person would read.
 *
 * Bytes are decoded as UTF-8 first (streaming, so a character split across chunks is never broken;
 * invalid bytes become U+FFFD), then a small VT-style state machine runs over the decoded characters.
 * Its state survives between chunks, so an escape sequence split at any byte is still removed.
 * 8-bit C1 controls are the code points U+0080–U+009F (what a UTF-8 terminal understands); a lone byte
 * 0x9B is invalid UTF-8 and shows as U+FFFD, as it would in xterm.
 *
 * The current line is a row of cells indexed by UTF-16 code unit (wide and combining characters are
 * not measured; a CR rewrite over them is approximate). Cost is linear in the input: plain text is
 * appended in runs, and a line switches to a cell array only when the cursor moves inside it.
 */

const GROUND = 0;
const ESCAPE = 1;
const ESCAPE_INTERMEDIATE = 2;
const CSI = 3;
const OSC_STRING = 4;
const OTHER_STRING = 5;
const STRING_ESCAPE = 6;

/** Longest CSI parameter string kept; longer sequences are consumed and ignored. */
const MAX_CSI_PARAMS = 64;

/** Default cap on one line's length: longer lines are split (1 MiB characters). */
export const DEFAULT_MAX_LINE_CHARS = 1024 * 1024;

/** Options for {@link TextRenderer}. */
export interface TextRendererOptions {
  /** Receives every completed line, without its line break, in order. */
  onLine: (line: string) => void;
  /**
   * A line that reaches this many characters is emitted as a completed line and a new line starts
   * (bounded memory for output without newlines). Default {@link DEFAULT_MAX_LINE_CHARS}.
   */
  maxLineChars?: number;
}

/**
 * Turns a terminal byte stream into text lines: escape sequences (CSI, OSC, DCS, SOS, PM, APC and the
 * other ESC sequences) removed, CR rewrites collapsed to the final line state (`10%\r100%` → `100%`,
 * `abcdef\rXY` → `XYcdef`), backspace and erase-in-line (CSI K 0/1/2) applied, cursor-forward (CSI C)
 * as spaces, CRLF / LF / VT / FF / NEL as line ends, tabs kept as `\t`, other controls dropped.
 * Blank cells at or after the cursor are trimmed from a line (so `a\b \b` leaves an empty line, and a
 * line ended by CRLF loses its trailing spaces), as a screen would show it.
 *
 * It also tracks the private modes DECCKM (`CSI ?1h/l`, {@link applicationCursor}) and the alternate
 * screen (`CSI ?47/1047/1049 h/l`, {@link altScreen}); `ESC c` resets both.
 */
export class TextRenderer {
  private readonly onLine: (line: string) => void;
  private readonly maxLineChars: number;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

  private state = GROUND;
  private csiParams = '';
  private csiIntermediates = '';
  private csiOverflow = false;

  /** Line content while the cursor sits at its end (or at 0 with {@link crPending}). */
  private text = '';
  /** Set after a CR while in string mode: the cursor is at column 0, content unchanged. */
  private crPending = false;
  /** Line content once the cursor has moved inside the line; null in string mode. */
  private cells: string[] | null = null;
  /** Cursor column in cell mode. */
  private col = 0;

  private appCursor = false;
  private alt = false;
  private rewriteCount = 0;
  private addressCount = 0;
  private redrawCount = 0;
  private eraseCount = 0;

  /** Creates a renderer that reports completed lines to `options.onLine`. */
  constructor(options: TextRendererOptions) {
    this.onLine = options.onLine;
    this.maxLineChars = Math.max(2, Math.floor(options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS));
  }

  /** True while the terminal is in application-cursor mode (DECCKM, `CSI ?1h`). */
  get applicationCursor(): boolean {
    return this.appCursor;
  }

  /** True while the terminal shows the alternate screen (`CSI ?47h`, `?1047h`, `?1049h`). */
  get altScreen(): boolean {
    return this.alt;
  }

  /**
   * A counter that grows at every cursor move to a row below the first (CUP/HVP `CSI row;col H|f` with
   * row ≥ 2, VPA `CSI row d`): the redraws of full-screen programs (`top`, `watch`), which the text view
   * can only smear. Homing the cursor (`clear`) does not count.
   */
  get cursorAddressing(): number {
    return this.addressCount;
  }

  /**
   * A counter that grows at every absolute cursor move (CUP/HVP/VPA, homing included): how a program
   * that repaints its screen (`top`, `watch`) starts each redraw. A `clear` counts once.
   */
  get redraws(): number {
    return this.redrawCount;
  }

  /** A counter that grows at every erase of the whole display (`CSI 2J`, `CSI 3J`). */
  get displayErases(): number {
    return this.eraseCount;
  }

  /**
   * A counter that grows whenever existing characters of the current line are changed or removed
   * (a CR or backspace followed by different text, an erase). Readers that returned part of the
   * current line compare it to know whether what they returned is still a prefix of the line.
   */
  get rewrites(): number {
    return this.rewriteCount;
  }

  /** The current, not yet completed line, as it would be shown now (may be empty). */
  get partialLine(): string {
    if (this.cells === null) {
      return this.crPending ? trimTrailingBlanks(this.text, 0) : this.text;
    }
    return joinCells(this.cells, this.col);
  }

  /** Feeds the next chunk of terminal bytes. Completed lines are reported through `onLine`. */
  write(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.process(this.decoder.decode(chunk, { stream: true }));
  }

  /**
   * Ends the byte stream: flushes the UTF-8 decoder (an incomplete trailing sequence becomes U+FFFD).
   * The partial line stays partial; see {@link completeLine}. Writing again afterwards starts a
   * fresh decoder state.
   */
  end(): void {
    const rest = this.decoder.decode();
    if (rest.length > 0) this.process(rest);
  }

  /** Emits the current line as completed if it is not empty (used when the stream has ended). */
  completeLine(): void {
    if (this.partialLine.length > 0) this.newLine();
  }

  private process(s: string): void {
    const n = s.length;
    let i = 0;
    while (i < n) {
      const state = this.state;
      if (state === GROUND) {
        let j = i;
        while (j < n) {
          const c = s.charCodeAt(j);
          if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) break;
          j++;
        }
        if (j > i) {
          this.print(s, i, j);
          i = j;
          if (i >= n) break;
        }
        this.ground(s.charCodeAt(i));
        i++;
      } else if (state === OSC_STRING || state === OTHER_STRING) {
        // Skip the string's payload quickly; only a few characters can end it. A line feed ends it too
        // and counts as a line feed: no title, hyperlink or marker spans lines, and the text after an
        // unterminated string (binary output: `ESC ]` by chance near its end) is shown, not swallowed.
        let j = i;
        while (j < n) {
          const c = s.charCodeAt(j);
          if (
            c === 0x1b ||
            c === 0x0a ||
            c === 0x9c ||
            c === 0x18 ||
            c === 0x1a ||
            (c === 0x07 && state === OSC_STRING)
          )
            break;
          j++;
        }
        if (j >= n) break;
        const c = s.charCodeAt(j);
        if (c === 0x0a) {
          this.state = GROUND;
          i = j;
          continue;
        }
        this.state = c === 0x1b ? STRING_ESCAPE : GROUND;
        i = j + 1;
      } else {
        this.step(s.charCodeAt(i), s, i);
        i++;
      }
    }
  }

  /** One character in a state other than GROUND and the string states. */
  private step(c: number, s: string, i: number): void {
    switch (this.state) {
      case STRING_ESCAPE:
        if (c === 0x5c) {
          this.state = GROUND; // ESC \ = ST
        } else {
          // ESC followed by something else ends the string and starts a new escape sequence.
          this.state = ESCAPE;
          this.step(c, s, i);
        }
        return;
      case ESCAPE:
        this.escape(c, s, i);
        return;
      case ESCAPE_INTERMEDIATE:
        if (c < 0x20) this.control(c);
        else if (c <= 0x2f) return;
        else if (c <= 0x7e) this.state = GROUND;
        else if (c !== 0x7f) this.reground(c, s, i);
        return;
      case CSI:
        this.csi(c, s, i);
        return;
      default:
        this.state = GROUND;
        this.ground(c);
    }
  }

  /** Leaves a sequence on an unexpected character and handles that character as ground text. */
  private reground(c: number, s: string, i: number): void {
    this.state = GROUND;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) this.ground(c);
    else this.print(s, i, i + 1);
  }

  private escape(c: number, s: string, i: number): void {
    if (c < 0x20) {
      this.control(c);
      return;
    }
    if (c <= 0x2f) {
      this.state = ESCAPE_INTERMEDIATE;
      return;
    }
    switch (c) {
      case 0x5b: // [
        this.startCsi();
        return;
      case 0x5d: // ]
        this.state = OSC_STRING;
        return;
      case 0x50: // P  DCS
      case 0x58: // X  SOS
      case 0x5e: // ^  PM
      case 0x5f: // _  APC
        this.state = OTHER_STRING;
        return;
      case 0x45: // E  NEL
        this.state = GROUND;
        this.newLine();
        return;
      case 0x63: // c  RIS
        this.state = GROUND;
        this.appCursor = false;
        this.alt = false;
        return;
      case 0x7f:
        return;
      default:
        if (c <= 0x7e) this.state = GROUND;
        else this.reground(c, s, i);
    }
  }

  private startCsi(): void {
    this.state = CSI;
    this.csiParams = '';
    this.csiIntermediates = '';
    this.csiOverflow = false;
  }

  private csi(c: number, s: string, i: number): void {
    if (c >= 0x30 && c <= 0x3f) {
      if (this.csiIntermediates.length > 0)
        this.csiOverflow = true; // parameter after intermediate
      else if (this.csiParams.length < MAX_CSI_PARAMS) this.csiParams += String.fromCharCode(c);
      else this.csiOverflow = true;
    } else if (c >= 0x20 && c <= 0x2f) {
      if (this.csiIntermediates.length < 4) this.csiIntermediates += String.fromCharCode(c);
      else this.csiOverflow = true;
    } else if (c >= 0x40 && c <= 0x7e) {
      this.state = GROUND;
      if (!this.csiOverflow) this.dispatchCsi(c);
    } else if (c < 0x20) {
      this.control(c);
    } else if (c !== 0x7f) {
      this.reground(c, s, i);
    }
  }

  private dispatchCsi(final: number): void {
    const params = this.csiParams;
    const intermediates = this.csiIntermediates;
    if (intermediates === '!' && final === 0x70 && params === '') {
      this.appCursor = false; // DECSTR soft reset
      return;
    }
    if (intermediates.length > 0) return;
    if (params.charCodeAt(0) === 0x3f) {
      // ?  private modes
      if (final !== 0x68 && final !== 0x6c) return;
      const on = final === 0x68;
      for (const p of params.slice(1).split(';')) {
        if (p === '1') this.appCursor = on;
        else if (p === '47' || p === '1047' || p === '1049') this.alt = on;
      }
      return;
    }
    const first = params.charCodeAt(0);
    if (params.length > 0 && first !== 0x3b && (first < 0x30 || first > 0x39)) return; // other private
    if (final === 0x48 || final === 0x66 || final === 0x64) {
      // H / f  cursor position, d  line position absolute: the row is the first parameter
      if (firstParam(params, 1) >= 2) this.addressCount++;
      this.redrawCount++;
      return;
    }
    if (final === 0x4a && firstParam(params, 0) >= 2) {
      // J  erase in display: all (2) or all with scrollback (3)
      this.eraseCount++;
      return;
    }
    switch (final) {
      case 0x4b: // K  erase in line
        this.eraseInLine(firstParam(params, 0));
        return;
      case 0x43: // C  cursor forward
        this.moveTo(this.cursorColumn() + Math.max(1, firstParam(params, 1)));
        return;
      case 0x44: // D  cursor back
        this.moveTo(this.cursorColumn() - Math.max(1, firstParam(params, 1)));
        return;
      case 0x47: // G  cursor horizontal absolute
      case 0x60: // `  HPA
        this.moveTo(Math.max(1, firstParam(params, 1)) - 1);
        return;
      default:
        return;
    }
  }

  /** C0 / C1 control handling in GROUND (and C0 executed inside escape sequences). */
  private ground(c: number): void {
    if (c >= 0x80) {
      switch (c) {
        case 0x9b:
          this.startCsi();
          return;
        case 0x9d:
          this.state = OSC_STRING;
          return;
        case 0x90:
        case 0x98:
        case 0x9e:
        case 0x9f:
          this.state = OTHER_STRING;
          return;
        case 0x85:
          this.newLine();
          return;
        default:
          return; // other C1 controls: dropped
      }
    }
    if (c === 0x1b) {
      this.state = ESCAPE;
      return;
    }
    this.control(c);
  }

  /** C0 controls (never ESC here; CAN/SUB cancel a sequence). */
  private control(c: number): void {
    switch (c) {
      case 0x0a:
      case 0x0b:
      case 0x0c:
        this.newLine();
        return;
      case 0x0d:
        this.carriageReturn();
        return;
      case 0x08:
        if (this.cursorColumn() > 0) this.moveTo(this.cursorColumn() - 1);
        return;
      case 0x09:
        this.print('\t', 0, 1);
        return;
      case 0x18:
      case 0x1a:
        this.state = GROUND;
        return;
      case 0x1b:
        this.state = ESCAPE;
        return;
      default:
        return; // BEL, NUL, DEL and the rest: dropped
    }
  }

  private cursorColumn(): number {
    if (this.cells !== null) return this.col;
    return this.crPending ? 0 : this.text.length;
  }

  private carriageReturn(): void {
    if (this.cells !== null) this.col = 0;
    else if (this.text.length > 0) this.crPending = true;
  }

  /** Switches the current line to cell mode (cursor may sit anywhere). */
  private toCells(): string[] {
    if (this.cells === null) {
      this.cells = this.text.length > 0 ? this.text.split('') : [];
      this.col = this.crPending ? 0 : this.text.length;
      this.text = '';
      this.crPending = false;
    }
    return this.cells;
  }

  private moveTo(col: number): void {
    const target = Math.min(Math.max(0, col), this.maxLineChars - 1);
    if (this.cells === null && !this.crPending && target === this.text.length) return;
    if (this.cells === null && this.crPending && target === 0) return;
    this.toCells();
    this.col = target;
  }

  private eraseInLine(mode: number): void {
    if (mode === 0) {
      if (this.cells === null) {
        if (this.crPending) {
          if (this.text.length > 0) this.rewriteCount++;
          this.text = '';
          this.crPending = false;
        }
        return;
      }
      if (this.cells.length > this.col) {
        this.cells.length = this.col;
        this.rewriteCount++;
      }
    } else if (mode === 1) {
      const cells = this.toCells();
      const end = Math.min(this.col, cells.length - 1);
      let changed = false;
      for (let k = 0; k <= end; k++) {
        if (cells[k] !== ' ') {
          cells[k] = ' ';
          changed = true;
        }
      }
      if (changed) this.rewriteCount++;
    } else if (mode === 2) {
      const cells = this.toCells();
      if (cells.length > 0) {
        cells.length = 0;
        this.rewriteCount++;
      }
    }
  }

  /** Writes s[start, end) (printable characters) at the cursor. */
  private print(s: string, start: number, end: number): void {
    let a = start;
    if (this.cells === null && this.crPending) {
      // CR then text: a rewrite from column 0. If it covers the old text, stay in string mode.
      if (end - a >= this.text.length && end - a < this.maxLineChars) {
        const run = s.slice(a, end);
        if (!run.startsWith(this.text)) this.rewriteCount++;
        this.text = run;
        this.crPending = false;
        return;
      }
      this.toCells();
    }
    if (this.cells === null) {
      while (a < end) {
        let room = this.maxLineChars - this.text.length;
        if (end - a < room) {
          this.text += a === 0 && end === s.length ? s : s.slice(a, end);
          return;
        }
        if (room > 1 && isHighSurrogate(s.charCodeAt(a + room - 1))) room--;
        this.text += s.slice(a, a + room);
        a += room;
        this.newLine();
      }
      return;
    }
    const cells = this.cells;
    for (; a < end; a++) {
      const ch = s[a] as string;
      while (cells.length < this.col) cells.push(' ');
      if (this.col < cells.length) {
        if (cells[this.col] !== ch) {
          cells[this.col] = ch;
          this.rewriteCount++;
        }
      } else {
        cells.push(ch);
      }
      this.col++;
      if (this.col >= this.maxLineChars) {
        this.newLine();
        if (a + 1 < end) this.print(s, a + 1, end);
        return;
      }
    }
  }

  private newLine(): void {
    const line = this.partialLine;
    this.text = '';
    this.cells = null;
    this.col = 0;
    this.crPending = false;
    this.onLine(line);
  }
}

/**
 * Renders a whole byte sequence (or string of bytes already decoded) to the text view: completed lines
 * joined with `\n`, followed by the partial line. Convenience for tests and one-shot uses.
 */
export function renderTerminalText(input: Uint8Array | string): string {
  const lines: string[] = [];
  const renderer = new TextRenderer({ onLine: (line) => lines.push(line) });
  renderer.write(typeof input === 'string' ? new TextEncoder().encode(input) : input);
  renderer.end();
  lines.push(renderer.partialLine);
  return lines.join('\n');
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function firstParam(params: string, fallback: number): number {
  let value = 0;
  let digits = 0;
  for (let k = 0; k < params.length; k++) {
    const c = params.charCodeAt(k);
    if (c === 0x3b || c === 0x3a) break;
    if (c < 0x30 || c > 0x39) return fallback;
    if (value < 1e6) value = value * 10 + (c - 0x30);
    digits++;
  }
  return digits === 0 ? fallback : value;
}

/** Drops spaces at or after column `from` at the end of `text`. */
function trimTrailingBlanks(text: string, from: number): string {
  let end = text.length;
  while (end > from && text.charCodeAt(end - 1) === 0x20) end--;
  return end === text.length ? text : text.slice(0, end);
}

function joinCells(cells: string[], col: number): string {
  let end = cells.length;
  while (end > col && cells[end - 1] === ' ') end--;
  if (end === cells.length) return cells.join('');
  return cells.slice(0, end).join('');
}
