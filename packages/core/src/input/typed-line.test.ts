import { describe, expect, it } from 'vitest';
import { encodeKeys } from './key-map.js';
import { typedLines } from './typed-line.js';

const keys = (names: string[]) => encodeKeys(names, { applicationCursor: false });

describe('typedLines: which lines typed bytes submit', () => {
  it('joins single-character keys into the pending line', () => {
    const t = typedLines('', keys(['r', 'm', 'space', 'v', 'enter']));
    expect(t.lines).toEqual(['rm v']);
    expect(t.pending).toBe('');
    expect(t.refusedKey).toBeUndefined();
  });

  it.each([['ctrl+j'], ['C-m'], ['^J'], ['enter'], ['return'], ['ctrl+m']])(
    'submission by %s is decided from the bytes',
    (key) => expect(typedLines('rm victim', keys([key])).lines).toEqual(['rm victim']),
  );

  it.each([
    [['up']],
    [['home']],
    [['delete']],
    [['tab']],
    [['backspace']],
    [['ctrl+u']],
    [['ctrl+w']],
    [['ctrl+r']],
    [['ctrl+p']],
    [['ctrl+o']],
    [['ctrl+y']],
    [['alt+b']],
  ])('refuses %j (line editing or history)', (k) => {
    expect(typedLines('echo rm victim', keys(k)).refusedKey).toBeDefined();
  });

  it('Ctrl+C abandons the line; signal keys alone are only signals', () => {
    const t = typedLines('rm vic', keys(['ctrl+c']));
    expect(t.pending).toBe('');
    expect(t.onlySignals).toBe(true);
    expect(typedLines('', keys(['ctrl+z'])).onlySignals).toBe(true);
    expect(typedLines('', 'ls\r').onlySignals).toBe(false);
  });

  it('splits several lines and keeps the unsubmitted rest', () => {
    expect(typedLines('', 'ls\ngit status\rech')).toEqual({
      lines: ['ls', 'git status'],
      pending: 'ech',
      refusedKey: undefined,
      onlySignals: false,
    });
  });

  it('Ctrl+D ends input only on an empty line', () => {
    expect(typedLines('', '\x04').refusedKey).toBeUndefined();
    expect(typedLines('rm', '\x04').refusedKey).toBe('Ctrl+D on a non-empty line');
  });
});
