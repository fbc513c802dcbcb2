import { describe, expect, it } from 'vitest';
import type { SpillSink } from '../driver.js';
import { compileUserPattern } from '../engine/user-pattern.js';
import { MemorySpill } from './memory-spill.js';
import { type OutputCursor, OutputLog, type ReadSinceResult } from './output-log.js';
import { renderTerminalText } from './text-renderer.js';

const enc = new TextEncoder();
const bytes = (s: string) => enc.encode(s);

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A log with lines `line 0` … `line N-1` (each ended by CRLF). */
function logWithLines(count: number, options: ConstructorParameters<typeof OutputLog>[0] = {}): OutputLog {
  const log = new OutputLog(options);
  let chunk = '';
  for (let n = 0; n < count; n++) {
    chunk += `line ${n}\r\n`;
    if (chunk.length > 4096) {
      log.append(bytes(chunk));
      chunk = '';
    }
  }
  if (chunk) log.append(bytes(chunk));
  return log;
}

/**
 * Rebuilds the stream from successive reads the way a reader must: a read that ended after a
 * complete line is followed by a line break before the next text.
 */
class Reader {
  text = '';
  cursor: OutputCursor;
  private pendingBreak = false;

  constructor(private readonly log: OutputLog) {
    this.cursor = log.cursor();
  }

  read(maxChars = 1_000_000): ReadSinceResult {
    const r = this.log.readSince(this.cursor, { maxChars });
    if (r.text !== '') {
      if (this.pendingBreak) this.text += '\n';
      this.text += r.text;
    }
    if (r.toLine >= r.fromLine) this.pendingBreak = r.next.offset === 0;
    this.cursor = r.next;
    return r;
  }
}

describe('OutputLog: counters', () => {
  it('counts bytes, completed lines and a non-empty partial line', () => {
    const log = new OutputLog();
    expect([log.bytesTotal, log.linesTotal]).toEqual([0, 0]);
    log.append(bytes('a\r\nb\r\n'));
    expect([log.bytesTotal, log.linesTotal, log.completedLines]).toEqual([6, 2, 2]);
    log.append(bytes('par'));
    expect([log.linesTotal, log.completedLines]).toEqual([3, 2]);
    log.append(bytes('\r\x1b[K'));
    expect(log.linesTotal).toBe(2);
  });

  it('finish() turns the partial line into a completed one and hands everything to the spill', () => {
    const spill = new MemorySpill();
    const log = new OutputLog({ spill });
    log.append(bytes('one\ntwo'));
    expect(spill.storedLines).toBe(0);
    log.finish();
    expect(log.finished).toBe(true);
    expect([log.linesTotal, log.completedLines]).toEqual([2, 2]);
    expect(spill.lines).toEqual(['one', 'two']);
    log.finish();
    expect(spill.lines).toEqual(['one', 'two']);
  });

  it('hands lines to the spill in order and in batches', () => {
    const spill = new MemorySpill();
    const log = logWithLines(20_000, { spill });
    log.flushSpill();
    expect(spill.storedLines).toBe(20_000);
    expect(spill.lines[12_345]).toBe('line 12345');
    expect(spill.appendCalls).toBeLessThan(50);
    log.close(true);
    expect(spill.removed).toBe(true);
  });

  it('finish() flushes an incomplete UTF-8 sequence as U+FFFD', () => {
    const log = new OutputLog();
    log.append(new Uint8Array([0x61, 0xe2, 0x82]));
    log.finish();
    expect(log.page({ offset: 0 }).text).toBe('a\uFFFD');
  });

  it('exposes the terminal modes for the key map and screen logic', () => {
    const log = new OutputLog();
    log.append(bytes('\x1b[?1h\x1b[?1049h'));
    expect([log.applicationCursor, log.altScreen]).toEqual([true, true]);
    log.append(bytes('\x1b[?1049l\x1b[?1l'));
    expect([log.applicationCursor, log.altScreen]).toEqual([false, false]);
  });

  it('reports output_info', () => {
    const log = new OutputLog({ spill: new MemorySpill({ path: '/tmp/x.log' }) });
    log.append(bytes('a\nb'));
    expect(log.outputInfo({ truncated: true, omittedLines: 3 })).toEqual({
      bytes_total: 3,
      lines_total: 2,
      truncated: true,
      omitted_lines: 3,
      log_path: '/tmp/x.log',
    });
    expect(log.spillPath).toBe('/tmp/x.log');
  });
});

describe('OutputLog.readSince', () => {
  it('returns new completed lines and the partial line, then only what is new', () => {
    const log = new OutputLog();
    const reader = new Reader(log);
    log.append(bytes('a\r\nb\r\n'));
    expect(reader.read()).toMatchObject({ text: 'a\nb', fromLine: 0, toLine: 1, truncated: false });
    expect(reader.read()).toMatchObject({ text: '', fromLine: 2, toLine: 1 });
    log.append(bytes('Password: '));
    expect(reader.read().text).toBe('Password: ');
    expect(reader.read().text).toBe('');
    log.append(bytes('hunter'));
    expect(reader.read().text).toBe('hunter');
    log.append(bytes('2\r\nwelcome\r\n'));
    expect(reader.read().text).toBe('2\nwelcome');
    expect(reader.text).toBe('a\nb\nPassword: hunter2\nwelcome');
  });

  it('starts a line that ended after being returned partly with a line break', () => {
    const log = new OutputLog();
    const reader = new Reader(log);
    log.append(bytes('abc'));
    expect(reader.read().text).toBe('abc');
    log.append(bytes('\r\n'));
    expect(reader.read()).toMatchObject({ text: '', fromLine: 0, toLine: 0 });
    log.append(bytes('d'));
    expect(reader.read().text).toBe('d');
    log.append(bytes('\r\ne\r\n'));
    expect(reader.read().text).toBe('\ne');
    expect(reader.text).toBe('abc\nd\ne');
  });

  it('returns a partly returned line whole again when it was rewritten', () => {
    const log = new OutputLog();
    const reader = new Reader(log);
    log.append(bytes('10%'));
    expect(reader.read().text).toBe('10%');
    log.append(bytes('\r100%'));
    expect(reader.read().text).toBe('100%');
    log.append(bytes('\r100% done'));
    expect(reader.read().text).toBe(' done');
    log.append(bytes('\r\x1b[Kfinished\r\n'));
    expect(reader.read().text).toBe('finished');
    log.append(bytes('x'));
    expect(reader.read().text).toBe('x');
  });

  it('a cursor from cursor() skips what was there', () => {
    const log = new OutputLog();
    log.append(bytes('old\r\nprompt$ '));
    const cursor = log.cursor();
    log.append(bytes('ls\r\nfile\r\n'));
    expect(log.readSince(cursor).text).toBe('ls\nfile');
    expect(log.readSince(log.cursorAtStart()).text).toBe('old\nprompt$ ls\nfile');
  });

  it('loses and duplicates nothing across many random chunks', () => {
    const rnd = random(42);
    const pieces = [
      'hello',
      ' wörld',
      '😀',
      '\x1b[1;32m',
      '\x1b]0;title\x07',
      '\r\n',
      '\t',
      'ok',
      '中文',
      '\x1b[0m',
    ];
    let source = '';
    for (let k = 0; k < 5000; k++) source += pieces[Math.floor(rnd() * pieces.length)];
    source += '\r\n';
    const all = bytes(source);
    const log = new OutputLog({ ringChars: 1_000_000 });
    const reader = new Reader(log);
    let at = 0;
    while (at < all.length) {
      const size = 1 + Math.floor(rnd() * 40);
      log.append(all.subarray(at, at + size));
      at += size;
      if (rnd() < 0.5) reader.read();
    }
    log.finish();
    reader.read();
    const expected = renderTerminalText(all);
    expect(`${reader.text}\n`).toBe(expected);
  });

  it('budgets a large read: head from the spill, tail from the ring, and the notice names the log', () => {
    const spill = new MemorySpill({ path: '/tmp/c.log' });
    const log = logWithLines(100_000, { spill, ringChars: 50_000, blockChars: 1000 });
    expect(log.droppedLines).toBe(0);
    const r = log.readSince(log.cursorAtStart(), { maxChars: 1000 });
    const lines = r.text.split('\n');
    expect(lines[0]).toBe('line 0');
    expect(lines.at(-1)).toBe('line 99999');
    const notice = lines.find((l) => l.startsWith('[…')) ?? '';
    expect(notice).toMatch(
      /^\[… \d+ lines omitted \(lines \d+-\d+\) of 100000 lines; readOutput offset=\d+ to page through them; full log: \/tmp\/c\.log\]$/,
    );
    expect(r).toMatchObject({ truncated: true, fromLine: 0, toLine: 99_999 });
    expect(r.omittedLines).toBeGreaterThan(99_000);
    expect(r.text.length - notice.length).toBeLessThanOrEqual(1000);
    expect(r.next).toMatchObject({ line: 100_000, offset: 0 });
  });

  it('caps a read at 1000 lines by default, and at maxLines when given', () => {
    const log = logWithLines(3000);
    const byDefault = log.readSince(log.cursorAtStart(), { maxChars: 200_000 }).text.split('\n');
    expect(byDefault).toHaveLength(1001);
    expect(byDefault[200]).toBe(
      '[… 2000 lines omitted (lines 200-2199) of 3000 lines; readOutput offset=200 to page through them]',
    );
    const capped = log.readSince(log.cursorAtStart(), { maxChars: 200_000, maxLines: 10 }).text.split('\n');
    expect(capped).toEqual([
      'line 0',
      'line 1',
      '[… 2990 lines omitted (lines 2-2991) of 3000 lines; readOutput offset=2 to page through them]',
      ...Array.from({ length: 8 }, (_, k) => `line ${2992 + k}`),
    ]);
  });

  it('rescues error lines that have left the ring and were never spilled', () => {
    const log = new OutputLog({ ringChars: 20_000, blockChars: 1000 });
    log.append(bytes('starting\r\n'.repeat(100)));
    log.append(bytes('compiling\r\nsrc/a.ts:3:7 - error TS2304: Cannot find name\r\n'));
    for (let k = 0; k < 100; k++) log.append(bytes('noise noise noise noise noise\r\n'.repeat(100)));
    log.append(bytes('done\r\n'));
    expect(log.droppedLines).toBeGreaterThan(1000);
    const r = log.readSince(log.cursorAtStart(), { maxChars: 2000 });
    expect(r.text).toContain('100: compiling\n101: src/a.ts:3:7 - error TS2304: Cannot find name\n');
    expect(r.errorLinesKept).toBe(1);
    expect(r.text.endsWith('noise noise noise noise noise\ndone')).toBe(true);
    expect(r.text).toMatch(/; 1 error line kept; readOutput offset=\d+ to page through them\]/);
  });

  it('is cheap after a huge flood: reads about maxChars from the spill, whatever arrived', () => {
    let spillCharsRead = 0;
    const inner = new MemorySpill({ maxLines: 50_000 });
    const spill: SpillSink = {
      appendLines: (lines) => inner.appendLines(lines),
      get storedLines() {
        return inner.storedLines;
      },
      readLines: (from, count) => {
        const got = inner.readLines(from, count);
        for (const l of got) spillCharsRead += l.length + 1;
        return got;
      },
      path: '/tmp/flood.log',
      close: (remove) => inner.close(remove),
    };
    const log = new OutputLog({ spill });
    const chunk = bytes('flood line with some text, number 1234567890\r\n'.repeat(1400));
    for (let k = 0; k < 500; k++) log.append(chunk); // ≈ 32 MB
    const r = log.readSince(log.cursorAtStart(), { maxChars: 30_000 });
    expect(r.truncated).toBe(true);
    expect(r.text.length).toBeLessThan(30_300);
    // The read costs what it returns, not what the log holds: the spill is read for little more than that.
    expect(spillCharsRead).toBeLessThan(60_000);
  });
});

describe('OutputLog.page', () => {
  it('pages by absolute 0-based line numbers with the documented header', () => {
    const log = logWithLines(5000);
    const page = log.page({ offset: 500, length: 50 });
    expect(page.header).toBe('[lines 500-549 of 5000, 4450 remaining]');
    expect(page.info).toEqual({
      from_line: 500,
      to_line: 549,
      total_lines: 5000,
      remaining_lines: 4450,
      dropped_lines: 0,
    });
    expect(page.lines[0]).toEqual({ n: 500, text: 'line 500' });
    expect(page.lines.at(-1)).toEqual({ n: 549, text: 'line 549' });
    expect(page.text.split('\n')).toHaveLength(50);
  });

  it('uses 1000 lines by default, and negative offsets count from the end', () => {
    const log = logWithLines(5000);
    expect(log.page({ offset: 0 }).info).toMatchObject({ from_line: 0, to_line: 999, remaining_lines: 4000 });
    const last = log.page({ offset: -10 });
    expect(last.header).toBe('[lines 4990-4999 of 5000, 0 remaining]');
    expect(last.lines.map((l) => l.n)).toEqual([4990, 4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999]);
    expect(log.page({ offset: -10, length: 3 }).header).toBe('[lines 4990-4992 of 5000, 7 remaining]');
    expect(log.page({ offset: -99_999, length: 2 }).header).toBe('[lines 0-1 of 5000, 4998 remaining]');
  });

  it('includes the partial line as the last line', () => {
    const log = new OutputLog();
    log.append(bytes('a\r\nb\r\n$ '));
    const page = log.page({ offset: -1 });
    expect(page.lines).toEqual([{ n: 2, text: '$ ' }]);
    expect(page.header).toBe('[lines 2-2 of 3, 0 remaining]');
  });

  it('returns an empty page past the end', () => {
    const log = logWithLines(10);
    const page = log.page({ offset: 10 });
    expect(page.lines).toEqual([]);
    expect(page.header).toBe('[no lines at 10 of 10, 0 remaining]');
    expect(page.info).toEqual({
      from_line: 10,
      to_line: 9,
      total_lines: 10,
      remaining_lines: 0,
      dropped_lines: 0,
    });
    expect(log.page({ offset: 500 }).info).toMatchObject({ from_line: 10, to_line: 9 });
    expect(log.page({ offset: 3, length: 0 }).header).toBe('[no lines at 3 of 10, 7 remaining]');
  });

  it('filters with line numbers and keeps everything in the log', () => {
    const log = logWithLines(1000);
    const page = log.page({ offset: 0, filter: compileUserPattern('filter', '7$'), length: 3 });
    expect(page.text).toBe('7: line 7\n17: line 17\n27: line 27');
    expect(page.header).toBe('[lines 0-27 of 1000, 972 remaining; 3 lines match the filter]');
    expect(page.info).toMatchObject({ from_line: 0, to_line: 27 });
    const all = log.page({ offset: 0, filter: compileUserPattern('filter', '7$') });
    expect(all.lines).toHaveLength(100);
    expect(all.info).toMatchObject({ to_line: 999, remaining_lines: 0 });
    expect(log.page({ offset: 0, length: 1 }).text).toBe('line 0');
    expect(log.linesTotal).toBe(1000);
  });

  it('caps the filter scan and the characters of a page', () => {
    const log = logWithLines(1000);
    expect(
      log.page({ offset: 0, filter: compileUserPattern('filter', 'nomatch'), maxScanLines: 100 }).header,
    ).toBe('[lines 0-99 of 1000, 900 remaining; 0 lines match the filter]');
    const page = log.page({ offset: 0, maxChars: 25 });
    expect(page.text).toBe('line 0\nline 1\nline 2');
    expect(page.info.to_line).toBe(2);
    const long = new OutputLog();
    long.append(bytes(`${'z'.repeat(100)}\r\n`));
    expect(long.page({ offset: 0, maxChars: 10 })).toMatchObject({
      text: 'zzzzzzzzzz',
      header: '[lines 0-0 of 1, 0 remaining; line 0 cut at 10 of 100 characters]',
    });
  });

  it('reads across the ring edge: older lines from the spill, newer from the ring', () => {
    const spill = new MemorySpill();
    const log = logWithLines(10_000, { spill, ringChars: 20_000, blockChars: 1000 });
    const ringFirst = 10_000 - log.page({ offset: 0 }).lines.length; // sanity: whole log is reachable
    expect(ringFirst).toBeLessThanOrEqual(9000);
    expect(log.droppedLines).toBe(0);
    for (const offset of [0, 5000, 8000, 8500, 9000, 9500]) {
      const page = log.page({ offset, length: 700 });
      expect(page.lines.map((l) => l.text)).toEqual(page.lines.map((l) => `line ${l.n}`));
      expect(page.lines[0]?.n).toBe(offset);
      expect(page.lines).toHaveLength(Math.min(700, 10_000 - offset));
    }
  });

  it('never lies about lines dropped from both ring and spill', () => {
    const spill = new MemorySpill({ maxLines: 3000 });
    const log = logWithLines(10_000, { spill, ringChars: 20_000, blockChars: 1000 });
    const dropped = log.droppedLines;
    expect(dropped).toBeGreaterThan(0);
    const ringFirst = 3000 + dropped;

    // A page reaching the gap stops before it.
    const before = log.page({ offset: 2990, length: 100 });
    expect(before.lines.map((l) => l.n)).toEqual(Array.from({ length: 10 }, (_, k) => 2990 + k));
    expect(before.header).toBe(
      `[lines 2990-2999 of 10000, 7000 remaining; lines 3000-${ringFirst - 1} are no longer stored]`,
    );
    expect(before.info).toEqual({
      from_line: 2990,
      to_line: 2999,
      total_lines: 10_000,
      remaining_lines: 7000,
      dropped_lines: dropped,
    });

    // A page starting in the gap moves to the first stored line and says so.
    const inGap = log.page({ offset: 3000, length: 5 });
    expect(inGap.lines[0]).toEqual({ n: ringFirst, text: `line ${ringFirst}` });
    expect(inGap.header).toBe(
      `[lines ${ringFirst}-${ringFirst + 4} of 10000, ${10_000 - ringFirst - 5} remaining; lines 3000-${ringFirst - 1} are no longer stored]`,
    );
    expect(inGap.info.from_line).toBe(ringFirst);

    // Every line returned is the right line.
    for (const offset of [0, 2500, 2999, 3000, ringFirst, 9990, -5]) {
      const page = log.page({ offset, length: 600 });
      for (const l of page.lines) expect(l.text).toBe(`line ${l.n}`);
    }
  });

  it('reports dropped lines without any spill', () => {
    const log = logWithLines(10_000, { ringChars: 20_000, blockChars: 1000 });
    const page = log.page({ offset: 0, length: 1 });
    expect(page.info.dropped_lines).toBe(log.droppedLines);
    expect(page.info.from_line).toBe(log.droppedLines);
    expect(page.header).toMatch(
      /^\[lines (\d+)-\1 of 10000, \d+ remaining; lines 0-\d+ are no longer stored\]$/,
    );
  });
});

describe('OutputLog raw view', () => {
  it('returns the raw bytes with escapes kept, from a byte cursor', () => {
    const log = new OutputLog();
    log.append(bytes('\x1b[31mred\x1b[0m\r\n'));
    const first = log.rawSince(0);
    expect(first).toMatchObject({ text: '\x1b[31mred\x1b[0m\r\n', fromByte: 0, droppedBytes: 0, note: '' });
    log.append(bytes('more'));
    expect(log.rawSince(first.next)).toMatchObject({ text: 'more', fromByte: first.next });
  });

  it('holds back a partial UTF-8 character and reports dropped bytes', () => {
    const log = new OutputLog({ rawRingBytes: 16 });
    const euro = bytes('€'); // 3 bytes
    log.append(euro.subarray(0, 2));
    const r = log.rawSince(0);
    expect(r).toMatchObject({ text: '', next: 0 });
    log.append(euro.subarray(2));
    expect(log.rawSince(r.next).text).toBe('€');
    log.append(bytes('0123456789abcdef€'));
    const late = log.rawSince(0);
    expect(late.droppedBytes).toBe(log.bytesTotal - 16);
    expect(late.note).toBe(`[… ${log.bytesTotal - 16} earlier bytes are no longer kept]`);
    expect(late.text).toBe('3456789abcdef€');
    expect(log.rawTail(3)).toMatchObject({ text: '€', droppedBytes: log.bytesTotal - 16 });
    expect(log.rawTail(4).text).toBe('f€');
  });
});

describe('OutputLog.tail and lastLine', () => {
  it('tail returns the last characters of the text view, partial line included', () => {
    const log = new OutputLog();
    log.append(bytes('first\r\nsecond\r\nDo you want to continue? [Y/n] '));
    expect(log.tail(30)).toBe('second\nDo you want to continue? [Y/n] '.slice(-30));
    expect(log.tail(1000)).toBe('first\nsecond\nDo you want to continue? [Y/n] ');
    log.append(bytes('y\r\n'));
    expect(log.tail(8)).toBe('[Y/n] y\n');
    expect(log.tail(0)).toBe('');
  });

  it('lastLine returns the newest non-blank line', () => {
    const log = new OutputLog();
    expect(log.lastLine()).toBe('');
    log.append(bytes('building...\r\n\r\n   \r\n'));
    expect(log.lastLine()).toBe('building...');
    log.append(bytes('50%'));
    expect(log.lastLine()).toBe('50%');
    log.append(bytes(`\r${'x'.repeat(1000)}`));
    expect(log.lastLine(10)).toBe('xxxxxxxxxx');
  });
});
