import { describe, expect, it } from 'vitest';
import { renderTerminalText, TextRenderer } from './text-renderer.js';

const enc = new TextEncoder();

/** Feeds `chunks` and returns completed lines plus the partial line (as the last element). */
function render(chunks: readonly (string | Uint8Array)[], maxLineChars?: number): string[] {
  const lines: string[] = [];
  const r = new TextRenderer({ onLine: (l) => lines.push(l), maxLineChars });
  for (const c of chunks) r.write(typeof c === 'string' ? enc.encode(c) : c);
  r.end();
  return [...lines, r.partialLine];
}

/** Renders `bytes` split into two chunks at every possible position and checks the result never changes. */
function expectSplitInvariant(bytes: Uint8Array, expected: string[]): void {
  expect(render([bytes])).toEqual(expected);
  for (let cut = 1; cut < bytes.length; cut++) {
    expect(render([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toEqual(expected);
  }
  // and one byte at a time
  const single: Uint8Array[] = [];
  for (let k = 0; k < bytes.length; k++) single.push(bytes.subarray(k, k + 1));
  expect(render(single)).toEqual(expected);
}

describe('TextRenderer: escape sequences', () => {
  it('removes CSI, OSC (BEL and ST), DCS, SOS, PM, APC and other ESC sequences split at every byte', () => {
    const input =
      'a\x1b[1;31mred\x1b[0m b\x1b]0;title\x07c\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\' +
      'd\x1bPq#0;2;0;0;0\x1b\\e\x1bXsos\x1b\\f\x1b^pm\x1b\\g\x1b_apc\x1b\\h\x1b(Bi\x1b7j\x1b8k\x1b=l\x1b[?25hm\n' +
      'n\x1b[38;2;1;2;3mo\x1b[>0cp\x1b[6nq';
    expectSplitInvariant(enc.encode(input), ['ared bclinkdefghijklm', 'nopq']);
  });

  it('handles 8-bit C1 controls encoded as UTF-8 code points', () => {
    // U+009B = CSI, U+009D = OSC, U+009C = ST, U+0090 = DCS, U+0085 = NEL, U+0084 = IND (dropped)
    const input = 'a\u009b31mb\u009d0;t\u0007c\u0090dcs\u009cd\u0085e\u0084f';
    expectSplitInvariant(enc.encode(input), ['abcd', 'ef']);
  });

  it('shows a raw 0x9b byte (invalid UTF-8) as U+FFFD instead of starting a sequence', () => {
    expect(render([new Uint8Array([0x61, 0x9b, 0x33, 0x31, 0x6d])])).toEqual(['a\uFFFD31m']);
  });

  it('ESC inside an OSC ends it and starts a new sequence; CAN aborts a sequence', () => {
    expect(render(['a\x1b]0;t\x1b[31mb\x1b[3\x18c'])).toEqual(['abc']);
  });

  it('executes C0 controls inside a CSI sequence', () => {
    expect(render(['a\x1b[3\n1mb'])).toEqual(['a', 'b']);
  });

  it('ends an unterminated OSC, DCS, SOS, PM or APC at a line feed: the text after binary output shows', () => {
    for (const intro of ['\x1b]', '\x1b]0;half a title', '\x1bPq#0;2', '\x1bX', '\x1b^', '\x1b_', '\u009d']) {
      expectSplitInvariant(enc.encode(`bin${intro}\nafter-binary\nnext`), ['bin', 'after-binary', 'next']);
    }
  });

  it('keeps a long unterminated OSC from leaking text, and resumes after its terminator', () => {
    const payload = 'x'.repeat(100_000);
    expect(render(['a\x1b]1337;', payload, payload, '\x07b\n'])).toEqual(['ab', '']);
  });
});

describe('TextRenderer: UTF-8', () => {
  it('never splits 2, 3 and 4 byte characters, at every byte position', () => {
    const text = 'é ü ñ — € 中文 😀🎉 end';
    expectSplitInvariant(enc.encode(text), [text]);
  });

  it('turns invalid bytes into U+FFFD', () => {
    const bytes = new Uint8Array([0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0xe2, 0x82]);
    expect(render([bytes])).toEqual(['a\uFFFDb\uFFFD(c\uFFFD']);
  });

  it('flushes an incomplete trailing sequence as U+FFFD at end()', () => {
    expect(render([new Uint8Array([0x61, 0xf0, 0x9f])])).toEqual(['a\uFFFD']);
  });
});

describe('TextRenderer: line editing', () => {
  it('collapses CR progress bars to the final state', () => {
    expect(render(['10%\r20%\r100%\n'])).toEqual(['100%', '']);
    expect(render(['10%\r', '20%\r', '100%\r\n', 'done'])).toEqual(['100%', 'done']);
  });

  it('overwrites only the prefix when CR is followed by shorter text', () => {
    expect(render(['abcdef\rXY'])).toEqual(['XYcdef']);
    expect(render(['abcdef\rXY\n'])).toEqual(['XYcdef', '']);
  });

  it('treats CRLF as one line end, and keeps tabs', () => {
    expect(render(['a\tb\r\nc\r\n'])).toEqual(['a\tb', 'c', '']);
  });

  it('applies backspace, and a\\b \\b erases', () => {
    expect(render(['abc\b\bX\n'])).toEqual(['aXc', '']);
    expect(render(['a\b \b'])).toEqual(['']);
    expect(render(['ab\b \b\b \bc\n'])).toEqual(['c', '']);
    expect(render(['\b\bx'])).toEqual(['x']);
  });

  it('applies erase in line (CSI K, 0K, 1K, 2K)', () => {
    expect(render(['abcdef\x1b[3D\x1b[K\n'])).toEqual(['abc', '']);
    expect(render(['abcdef\x1b[3D\x1b[0K'])).toEqual(['abc']);
    expect(render(['abcdef\x1b[3D\x1b[1K\n'])).toEqual(['    ef', '']);
    expect(render(['abcdef\x1b[2K\rnew\n'])).toEqual(['new', '']);
    expect(render(['downloading 10%\r\x1b[Kdone\n'])).toEqual(['done', '']);
  });

  it('moves the cursor forward with spaces (CSI C) and to a column (CSI G)', () => {
    expect(render(['a\x1b[3Cb'])).toEqual(['a   b']);
    expect(render(['a\x1b[Cb'])).toEqual(['a b']);
    expect(render(['abcdef\x1b[2GX'])).toEqual(['aXcdef']);
  });

  it('drops other C0 controls', () => {
    expect(render(['a\x00b\x07c\x7fd\x01e'])).toEqual(['abcde']);
  });

  it('splits lines longer than maxLineChars', () => {
    expect(render(['abcdefghij'], 4)).toEqual(['abcd', 'efgh', 'ij']);
    expect(render(['ab', 'cdef', 'ghij\n'], 4)).toEqual(['abcd', 'efgh', 'ij', '']);
    expect(render(['xx\rabcdefghij'], 4)).toEqual(['abcd', 'efgh', 'ij']);
    expect(render(['xxxxx\rab\b\bcdefghij'], 4)).toEqual(['xxxx', 'cdef', 'ghij', '']);
  });

  it('completeLine() emits a non-empty partial line only', () => {
    const lines: string[] = [];
    const r = new TextRenderer({ onLine: (l) => lines.push(l) });
    r.write(enc.encode('a\nb'));
    r.completeLine();
    r.completeLine();
    expect(lines).toEqual(['a', 'b']);
    expect(r.partialLine).toBe('');
  });

  it('counts rewrites of the current line but not appends or identical redraws', () => {
    const r = new TextRenderer({ onLine: () => {} });
    r.write(enc.encode('abc'));
    r.write(enc.encode('def\rabcdef'));
    expect(r.rewrites).toBe(0);
    r.write(enc.encode('\rX'));
    expect(r.rewrites).toBe(1);
    r.write(enc.encode('\x1b[2K'));
    expect(r.rewrites).toBe(2);
  });
});

describe('TextRenderer: modes', () => {
  it('tracks DECCKM application cursor mode, even when split', () => {
    const lines: string[] = [];
    const r = new TextRenderer({ onLine: (l) => lines.push(l) });
    expect(r.applicationCursor).toBe(false);
    r.write(enc.encode('\x1b[?'));
    r.write(enc.encode('1h'));
    expect(r.applicationCursor).toBe(true);
    r.write(enc.encode('\x1b[?1l'));
    expect(r.applicationCursor).toBe(false);
    r.write(enc.encode('\x1b[?25;1h'));
    expect(r.applicationCursor).toBe(true);
    r.write(enc.encode('\x1bc'));
    expect(r.applicationCursor).toBe(false);
  });

  it('tracks the alternate screen for 47, 1047 and 1049', () => {
    const r = new TextRenderer({ onLine: () => {} });
    for (const mode of ['47', '1047', '1049']) {
      r.write(enc.encode(`\x1b[?${mode}h`));
      expect(r.altScreen).toBe(true);
      r.write(enc.encode(`\x1b[?${mode}l`));
      expect(r.altScreen).toBe(false);
    }
    r.write(enc.encode('\x1b[1049h')); // not private: ignored
    expect(r.altScreen).toBe(false);
  });
  it('counts cursor addressing below the first row and repaints (absolute moves), not a clear', () => {
    const r = new TextRenderer({ onLine: () => {} });
    r.write(enc.encode('\x1b[H\x1b[2J\x1b[3J')); // clear(1)
    expect(r.redraws).toBe(1);
    expect(r.cursorAddressing).toBe(0);
    r.write(enc.encode('\x1b[1;1Hx\x1b[H')); // homing again: top, watch
    expect(r.redraws).toBe(3);
    expect(r.cursorAddressing).toBe(0);
    r.write(enc.encode('\x1b[6;1H\x1b[12d\x1b[3;4f'));
    expect(r.cursorAddressing).toBe(3);
    expect(r.redraws).toBe(6);
  });
});

describe('renderTerminalText', () => {
  it('renders a whole string', () => {
    expect(renderTerminalText('\x1b[32mok\x1b[0m\r\nnext')).toBe('ok\nnext');
  });
});
