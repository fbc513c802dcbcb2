/**
 * Follows a terminal's output for switches to and from the alternate screen (`CSI ? 47|1047|1049 h|l`, where
 * full-screen programs such as vim, less and top draw): a cheap scan for ESC, which also finds a switch
 * split across chunks. The text renderer tracks the same modes while rendering a command's log; this is for
 * streams nothing renders (a shared session between commands, an attached viewer).
 */

const ALT_SCREEN = /\x1b\[\?(?:1049|1047|47)([hl])/g;
/** Longest switch sequence: what may be held over from one chunk to the next. */
const LONGEST = '\x1b[?1049h'.length;

/** The alternate-screen state of one output stream (see the module doc). */
export class AltScreenWatch {
  /** True while the alternate screen shows. */
  on = false;
  /** How many switches were seen (so that an older screen snapshot can be told apart). */
  switches = 0;
  private carry = '';

  /** Follows the next chunk of output. */
  push(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === 'string' ? undefined : chunk;
    if (bytes !== undefined && this.carry === '' && bytes.indexOf(0x1b) < 0) return;
    const text = this.carry + (bytes === undefined ? (chunk as string) : latin1(bytes));
    for (const m of text.matchAll(ALT_SCREEN)) {
      this.on = m[1] === 'h';
      this.switches++;
    }
    const esc = text.lastIndexOf('\x1b');
    this.carry = esc >= 0 && text.length - esc < LONGEST ? text.slice(esc) : '';
  }
}

function latin1(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}
