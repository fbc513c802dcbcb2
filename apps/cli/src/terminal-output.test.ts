import { describe, expect, test } from 'vitest';
import { escapeControls, formatTable, terminalSafeJson } from './terminal-output.js';

describe('escapeControls', () => {
  test('C0, DEL, C1 and bidi controls become visible escapes; printable text stays', () => {
    expect(escapeControls('a\u001b[2Jb\u0007c\u007fd\u009b2Je\u202ef é 🐚')).toBe(
      'a\\x1b[2Jb\\x07c\\x7fd\\x9b2Je\\u202ef é 🐚',
    );
  });

  test('newlines: marked in one-line text, kept in a message; tabs likewise', () => {
    expect(escapeControls('one \n two\tthree\r\n')).toBe('one ↵ two\\tthree ↵ ');
    expect(escapeControls('one\n\ttwo\r', { newlines: 'keep' })).toBe('one\n\ttwo\\x0d');
  });

  test('a table row stays one line whatever its cells hold', () => {
    const table = formatTable(['A', 'B'], [['x\u001b[1A', 'y\nz']]);
    expect(table.split('\n')).toHaveLength(2);
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });

  test('JSON keeps its value and its indentation, with no raw C1 or bidi control', () => {
    const value = { s: 'a\u009bb\u202ec\u001bd' };
    const text = terminalSafeJson(value);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).not.toMatch(/[\u0080-\u009f\u202e\u001b]/);
    expect(text).toContain('\n  "s"');
  });
});
