import { describe, expect, it } from 'vitest';
import { EMPTY_LINE, type PersonLine, typeKeys } from './person-line.js';

/** Types each chunk in turn from an empty line. */
function typed(...chunks: string[]): { line: PersonLine; submitted: string[] } {
  let line = EMPTY_LINE;
  const submitted: string[] = [];
  for (const chunk of chunks) {
    const step = typeKeys(line, chunk);
    line = step.line;
    submitted.push(...step.submitted.map((s) => s.text));
  }
  return { line, submitted };
}

describe('typeKeys (a person at the terminal)', () => {
  it('printable characters start a line; Enter (CR or LF) submits it; the text is kept exactly', () => {
    expect(typed('echo hal').line).toEqual({ text: 'echo hal', pending: true, exact: true });
    expect(typed('echo hal', 'f\r')).toEqual({ line: EMPTY_LINE, submitted: ['echo half'] });
    expect(typed('a\nb\r\n').submitted).toEqual(['a', 'b', '']);
    expect(typed('héllo ✓').line.text).toBe('héllo ✓');
  });

  it('Ctrl+C abandons the line; Ctrl+U, and Backspace or Ctrl+W down to nothing, empty it', () => {
    expect(typed('rm -rf x\u0003').line).toEqual(EMPTY_LINE);
    expect(typed('ls -la\u0015').line).toEqual(EMPTY_LINE);
    expect(typed('ab', '\u007f').line).toEqual({ text: 'a', pending: true, exact: true });
    expect(typed('ab\u007f\u0008').line).toEqual({ text: '', pending: false, exact: true });
    expect(typed('echo two words\u0017').line.text).toBe('echo two ');
    expect(typed('one  \u0017').line).toEqual({ text: '', pending: false, exact: true });
    expect(typed('\u007f').line).toEqual(EMPTY_LINE);
  });

  it('signal keys and Ctrl+D leave the line as it is', () => {
    expect(typed('\u001a\u001c\u0004').line).toEqual(EMPTY_LINE);
    expect(typed('cat\u0004').line).toEqual({ text: 'cat', pending: true, exact: true });
  });

  it('keys whose effect is not followed make the line pending and inexact until Enter or Ctrl+C', () => {
    // An arrow key (history), Tab (completion), Ctrl+R (search), Alt+b, a lone Escape.
    for (const key of ['\u001b[A', '\u001bOA', '\t', '\u0012', '\u001bb', '\u001b']) {
      const { line } = typed(key);
      expect(line, JSON.stringify(key)).toEqual({ text: '', pending: true, exact: false });
      // Erasing cannot be followed any more: the cursor may be anywhere.
      expect(typeKeys(line, '\u0015\u007f').line.pending).toBe(true);
      expect(typeKeys(line, '\u0003').line).toEqual(EMPTY_LINE);
      expect(typeKeys(line, 'x\r').submitted).toEqual([{ text: 'x', exact: false }]);
    }
    // The whole escape sequence is one key: what follows it is typed text again.
    expect(typed('\u001b[1;5Dab').line.text).toBe('ab');
  });
});
