import { describe, expect, it } from 'vitest';
import { NEUTRAL_VOCABULARY } from '../hint.js';
import {
  type BudgetSource,
  budgetLines,
  budgetText,
  ERROR_LINE_MIN_CHARS,
  ERROR_LINE_PATTERN,
  ERROR_SCAN_CHARS,
  looksLikeError,
  omissionNotice,
} from './budget.js';

/** `L0000`, `L0001`, …: five characters, six with the line break. */
const fixed = (n: number) => `L${String(n).padStart(4, '0')}`;
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => fixed(a + k));

describe('omissionNotice', () => {
  it('uses the exact documented format with plain digits', () => {
    expect(
      omissionNotice({
        omittedFrom: 120,
        omittedTo: 41329,
        totalLines: 41450,
        errorLinesKept: 3,
        logPath: '/tmp/c_1.log',
      }),
    ).toBe(
      '[… 41210 lines omitted (lines 120-41329) of 41450 lines; 3 error lines kept; readOutput offset=120 to page through them; full log: /tmp/c_1.log]',
    );
  });

  it('states the error lines only when some were kept, omits the path when unknown, and uses singulars', () => {
    expect(omissionNotice({ omittedFrom: 5, omittedTo: 9, totalLines: 20, errorLinesKept: 0 })).toBe(
      '[… 5 lines omitted (lines 5-9) of 20 lines; readOutput offset=5 to page through them]',
    );
    expect(omissionNotice({ omittedFrom: 7, omittedTo: 7, totalLines: 20, errorLinesKept: 1 })).toBe(
      '[… 1 line omitted (line 7) of 20 lines; 1 error line kept; readOutput offset=7 to page through them]',
    );
    expect(omissionNotice({ omittedFrom: 0, omittedTo: 0, totalLines: 1, errorLinesKept: 0 })).toBe(
      '[… 1 line omitted (line 0) of 1 line; readOutput offset=0 to page through them]',
    );
  });

  it("names the paging operation in the caller's vocabulary (each face its own), else by its verb", () => {
    const notice = { omittedFrom: 5, omittedTo: 9, totalLines: 20, errorLinesKept: 0 };
    const words = { ...NEUTRAL_VOCABULARY, readOutput: 'fetch_more' };
    expect(omissionNotice(notice, words)).toBe(
      '[… 5 lines omitted (lines 5-9) of 20 lines; fetch_more offset=5 to page through them]',
    );
    expect(omissionNotice(notice)).not.toMatch(/read_output/);
  });
});

describe('looksLikeError', () => {
  it('matches the error words case-insensitively and file:line: locations', () => {
    for (const line of [
      'ERROR: boom',
      'test failed',
      'FAIL src/x.test.ts',
      "thread 'main' panicked at",
      'Traceback (most recent call last):',
      'java.lang.NullPointerException',
      'fatal: not a git repository',
      'src/a.ts:12: something',
      'foo.py:3: in <module>',
      '  --> src/main.rs:3:5',
    ]) {
      expect(looksLikeError(line), line).toBe(true);
    }
    for (const line of ['all good', 'compiled 12 files', 'at 12:30:45', 'version 1.2:3']) {
      expect(looksLikeError(line), line).toBe(false);
    }
  });

  it('skips only lines too short for the pattern to match', () => {
    for (const line of ['fail', 'FAIL', 'a.b:1:']) expect(looksLikeError(line), line).toBe(true);
    // Every string shorter than the minimum over the pattern's own characters: none matches.
    const alphabet = [...'aeilfrtcpnx.:1b_'];
    const short: string[] = [''];
    for (let size = 1; size < ERROR_LINE_MIN_CHARS; size++) {
      for (const head of short.filter((s) => s.length === size - 1)) {
        for (const c of alphabet) short.push(head + c);
      }
    }
    expect(short.filter((s) => ERROR_LINE_PATTERN.test(s))).toEqual([]);
    expect(ERROR_LINE_PATTERN.test('fail')).toBe(true);
  });

  it('examines only the start of huge and adversarial lines (what keeps it linear)', () => {
    for (const line of ['a.'.repeat(500_000), 'a.b1:'.repeat(200_000), 'x'.repeat(5_000_000)]) {
      expect(looksLikeError(line)).toBe(looksLikeError(line.slice(0, ERROR_SCAN_CHARS)));
    }
  });
});

describe('budgetText', () => {
  it('returns everything when it fits', () => {
    const text = range(0, 9).join('\n');
    expect(budgetText(text, { maxChars: 1000 })).toEqual({
      text,
      truncated: false,
      omittedLines: 0,
      omittedFrom: -1,
      omittedTo: -1,
      errorLinesKept: 0,
    });
    // exactly at the budget: 10 lines of 5 characters + 9 line breaks = 59
    expect(budgetText(text, { maxChars: 59 }).truncated).toBe(false);
    expect(budgetText(text, { maxChars: 58 }).truncated).toBe(true);
  });

  it('keeps ~20% head and ~80% tail at line boundaries and states what it omitted', () => {
    const text = range(0, 999).join('\n');
    const result = budgetText(text, { maxChars: 600 });
    // head budget 120 → 20 lines; the tail gets the remaining 480 → 80 lines
    const notice =
      '[… 900 lines omitted (lines 20-919) of 1000 lines; readOutput offset=20 to page through them]';
    expect(result.text).toBe([...range(0, 19), notice, ...range(920, 999)].join('\n'));
    expect(result).toMatchObject({
      truncated: true,
      omittedLines: 900,
      omittedFrom: 20,
      omittedTo: 919,
      errorLinesKept: 0,
    });
    expect(result.text.length - notice.length).toBeLessThanOrEqual(600);
  });

  it('numbers the notice with the absolute first line and names the full log', () => {
    const text = range(0, 999).join('\n');
    const result = budgetText(text, { maxChars: 600, firstLine: 5000, logPath: '/run/conch/c_x.log' });
    expect(result.text).toContain(
      '[… 900 lines omitted (lines 5020-5919) of 6000 lines; readOutput offset=5020 to page through them; full log: /run/conch/c_x.log]',
    );
  });

  it('rescues error lines from the cut middle with one line of context, numbered, in order', () => {
    const lines = range(0, 999);
    lines[500] = 'src/a.ts:12: error TS2322';
    lines[700] = 'Traceback (most recent call last):';
    lines[701] = 'ValueError: bad';
    const result = budgetText(lines.join('\n'), { maxChars: 1000 });
    expect(result.errorLinesKept).toBe(3);
    const rescued = [
      '499: L0499',
      '500: src/a.ts:12: error TS2322',
      '699: L0699',
      '700: Traceback (most recent call last):',
      '701: ValueError: bad',
    ].join('\n');
    expect(result.text).toContain(
      `error lines kept; readOutput offset=33 to page through them]\n${rescued}\n`,
    );
    const [head, rest] = result.text.split('\n[…') as [string, string];
    expect(head.split('\n')).toEqual(range(0, 32));
    // The tail is the end of the output, and the whole stays within budget (notice aside).
    expect(rest.endsWith(range(900, 999).join('\n'))).toBe(true);
    const notice = result.text.split('\n').find((l) => l.startsWith('[…')) ?? '';
    expect(result.text.length - notice.length).toBeLessThanOrEqual(1000);
    expect(notice).toBe(
      `[… ${result.omittedLines} lines omitted (lines 33-${result.omittedTo}) of 1000 lines; 3 error lines kept; readOutput offset=33 to page through them]`,
    );
  });

  it('limits rescued lines to ~25% of the budget, earliest first', () => {
    const lines = range(0, 9999).map((l, n) => (n % 10 === 0 ? `error ${l}` : l));
    const result = budgetText(lines.join('\n'), { maxChars: 2000 });
    const rescued = result.text.split('\n').filter((l) => /^\d+: /.test(l));
    const rescuedChars = rescued.reduce((sum, l) => sum + l.length + 1, 0);
    expect(rescuedChars).toBeLessThanOrEqual(500);
    expect(rescued.length).toBeGreaterThan(0);
    // Earliest first: the first error of the omitted range (its context line is in the head here).
    const firstError = Math.ceil(result.omittedFrom / 10) * 10;
    expect(firstError).toBe(result.omittedFrom);
    expect(rescued[0]).toBe(`${firstError}: error ${fixed(firstError)}`);
    expect(rescued[1]).toBe(`${firstError + 9}: ${fixed(firstError + 9)}`);
    expect(rescued[2]).toBe(`${firstError + 10}: error ${fixed(firstError + 10)}`);
    expect(result.errorLinesKept).toBe((rescued.length + 1) / 2);
    expect(result.text.endsWith(lines[9999] as string)).toBe(true);
  });

  it('cuts a single huge line into its start and its end', () => {
    const line = `${'a'.repeat(5000)}${'b'.repeat(5000)}`;
    const result = budgetText(line, { maxChars: 1000 });
    const notice = '[… 1 line omitted (line 0) of 1 line; readOutput offset=0 to page through them]';
    expect(result.text).toBe(`${'a'.repeat(199)}\n${notice}\n${'b'.repeat(799)}`);
    expect(result.omittedLines).toBe(1);
  });

  it('cuts the last line when no whole line fits in the tail', () => {
    const text = ['short', 'x'.repeat(10_000)].join('\n');
    const result = budgetText(text, { maxChars: 100 });
    expect(result.text).toBe(
      `short\n[… 1 line omitted (line 1) of 2 lines; readOutput offset=1 to page through them]\n${'x'.repeat(93)}`,
    );
  });
});

describe('budgetText with a line cap', () => {
  it('returns everything when the lines fit, exactly at the cap', () => {
    const text = range(0, 9).join('\n');
    expect(budgetText(text, { maxChars: 30_000, maxLines: 10 }).truncated).toBe(false);
    expect(budgetText(text, { maxChars: 30_000, maxLines: 9 }).truncated).toBe(true);
  });

  it('keeps ~20% of the lines at the head and the rest at the tail when the lines are over the cap', () => {
    const text = range(0, 2999).join('\n');
    const result = budgetText(text, { maxChars: 30_000, maxLines: 1000 });
    // 3000 short lines fit in 30000 characters but not in 1000 lines: head 200, tail 800.
    const notice =
      '[… 2000 lines omitted (lines 200-2199) of 3000 lines; readOutput offset=200 to page through them]';
    expect(result.text).toBe([...range(0, 199), notice, ...range(2200, 2999)].join('\n'));
    expect(result).toMatchObject({ truncated: true, omittedLines: 2000, omittedFrom: 200, omittedTo: 2199 });
  });

  it('counts rescued lines (with their context) against the cap, at most ~25% of it', () => {
    const lines = range(0, 2999).map((l, n) => (n % 5 === 0 ? `FAILED ${l}` : l));
    const result = budgetText(lines.join('\n'), { maxChars: 200_000, maxLines: 100 });
    const out = result.text.split('\n');
    const rescued = out.filter((l) => /^\d+: /.test(l));
    expect(rescued.length).toBeGreaterThan(0);
    expect(rescued.length).toBeLessThanOrEqual(25);
    // head + rescued + tail = the cap; the notice comes on top
    expect(out.length).toBe(101);
    expect(out[20]).toMatch(/^\[… \d+ lines omitted \(lines 20-\d+\) of 3000 lines; \d+ error lines kept; /);
    expect(out.at(-1)).toBe(fixed(2999));
  });

  it('rescues a FAILED line from the middle of 3000 lines within the first 2000 lines of the text', () => {
    const lines = range(0, 2999);
    lines[1500] = 'FAILED tests/test_x.py::test_y - AssertionError';
    const result = budgetText(lines.join('\n'), { maxChars: 30_000, maxLines: 1000 });
    const out = result.text.split('\n');
    expect(out.length).toBeLessThanOrEqual(1001);
    expect(out.indexOf('1500: FAILED tests/test_x.py::test_y - AssertionError')).toBe(202);
    expect(out[201]).toBe('1499: L1499');
  });
});

describe('budgetLines on a source', () => {
  it('reads about maxChars characters, not the whole source', () => {
    let read = 0;
    const total = 10_000_000;
    const source: BudgetSource = {
      fromLine: 0,
      toLine: total - 1,
      readLines: (from, count) => {
        read += count;
        return Array.from({ length: count }, (_, k) => fixed((from + k) % 10000));
      },
      errorLines: () => [],
    };
    const result = budgetLines(source, { maxChars: 30_000 });
    expect(result.omittedLines).toBeGreaterThan(total - 10_000);
    expect(read).toBeLessThan(20_000);
  });

  it('puts lines that are gone into the omitted range', () => {
    const source: BudgetSource = {
      fromLine: 0,
      toLine: 99,
      readLines: (from, count) =>
        Array.from({ length: count }, (_, k) =>
          from + k >= 10 && from + k < 90 ? undefined : fixed(from + k),
        ),
      errorLines: () => [],
    };
    const result = budgetLines(source, { maxChars: 100_000 });
    expect(result.text).toBe(
      [
        ...range(0, 9),
        '[… 80 lines omitted (lines 10-89) of 100 lines; readOutput offset=10 to page through them]',
        ...range(90, 99),
      ].join('\n'),
    );
  });

  it('returns nothing for an empty range', () => {
    const source: BudgetSource = { fromLine: 5, toLine: 4, readLines: () => [], errorLines: () => [] };
    expect(budgetLines(source, { maxChars: 10 }).text).toBe('');
  });
});
