import { describe, expect, it } from 'vitest';
import { compactScreen, screenPromptLine } from './compact-screen.js';

describe('compactScreen', () => {
  it('trims trailing blanks, drops empty rows at the ends and collapses runs of empty rows', () => {
    const rows = ['', '   ', 'top line      ', '', '', '', '  indented  ', '~', '~   ', '', '', ' '];
    expect(compactScreen({ rows })).toBe('top line\n\n  indented\n~\n~');
  });

  it('turns an empty screen into an empty string', () => {
    expect(compactScreen({ rows: Array.from({ length: 50 }, () => ' '.repeat(200)) })).toBe('');
  });

  it('keeps a 200-column vim screen small (no padding survives)', () => {
    const rows = [
      'hello'.padEnd(200),
      ...Array.from({ length: 47 }, () => '~'.padEnd(200)),
      ''.padEnd(200),
      `"x.txt" [New]`.padEnd(180) + '0,0-1 All'.padEnd(20),
    ];
    const out = compactScreen({ rows });
    expect(out.length).toBeLessThan(400);
    expect(out.split('\n').at(-1)).toBe(`"x.txt" [New]${' '.repeat(167)}0,0-1 All`);
  });
});

describe('screenPromptLine', () => {
  it('is the last non-empty row with inner runs of blanks collapsed', () => {
    const rows = ['~', `"x.txt" [New]${' '.repeat(160)}0,0-1${' '.repeat(9)}All`, ' '.repeat(200)];
    expect(screenPromptLine({ rows })).toBe('"x.txt" [New] 0,0-1 All');
  });

  it('is empty for an empty screen', () => {
    expect(screenPromptLine({ rows: ['', '   '] })).toBe('');
  });
});
