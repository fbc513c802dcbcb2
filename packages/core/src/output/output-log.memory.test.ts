import { describe, expect, it } from 'vitest';
import { MemorySpill } from './memory-spill.js';
import { OutputLog } from './output-log.js';

const MB = 1024 * 1024;
const enc = new TextEncoder();

/**
 * Streams `totalBytes` of `chunk` repeated into a log; returns the largest heap growth seen and the
 * largest number of characters the ring retained at any point.
 */
function flood(
  log: OutputLog,
  chunk: Uint8Array,
  totalBytes: number,
): { growth: number; maxRetained: number } {
  const base = process.memoryUsage().heapUsed;
  let growth = 0;
  let maxRetained = 0;
  let sent = 0;
  let k = 0;
  while (sent < totalBytes) {
    log.append(chunk);
    sent += chunk.length;
    maxRetained = Math.max(maxRetained, log.retainedChars);
    if (++k % 64 === 0) growth = Math.max(growth, process.memoryUsage().heapUsed - base);
  }
  return { growth: Math.max(growth, process.memoryUsage().heapUsed - base), maxRetained };
}

describe('OutputLog: bounded memory under a 100 MB flood', () => {
  it('keeps `yes`-like lines within the ring cap and counts what was dropped', () => {
    const spill = new MemorySpill({ maxChars: 2 * MB, path: '/tmp/spill.log' });
    const log = new OutputLog({ spill });
    const line = 'y is for yes, the quick brown fox\r\n';
    const chunk = enc.encode(line.repeat(Math.floor((64 * 1024) / line.length)));
    const { growth, maxRetained } = flood(log, chunk, 100 * MB);
    const lines = log.completedLines;
    expect(log.bytesTotal).toBeGreaterThanOrEqual(100 * MB);
    expect(lines).toBe(log.bytesTotal / line.length);
    // The cap, plus at most one block being filled (64 Ki characters).
    expect(maxRetained).toBeLessThanOrEqual(8 * MB + 64 * 1024 + line.length);
    expect(log.retainedChars).toBeGreaterThan(7 * MB);
    expect(spill.storedLines).toBeGreaterThan(0);
    expect(log.droppedLines).toBeGreaterThan(0);
    // Everything is accounted for: spill (from 0), dropped, ring (to the end).
    const page = log.page({ offset: -1 });
    expect(page.lines).toEqual([{ n: lines - 1, text: 'y is for yes, the quick brown fox' }]);
    expect(page.info.dropped_lines).toBe(log.droppedLines);
    // 100 MB (about 3 million line objects) went through; keeping them would take well over 200 MB of heap.
    // What stays is the ring (≈ 8 MB), the spill (2 MB) and garbage not yet collected.
    expect(growth).toBeLessThan(150 * MB);
  });

  it('splits a 100 MB stream without newlines into capped lines and stays within the ring cap', () => {
    const log = new OutputLog();
    const chunk = enc.encode('x'.repeat(256 * 1024));
    const { growth, maxRetained } = flood(log, chunk, 100 * MB);
    // Lines are cut at 1 Mi characters.
    expect(log.completedLines).toBe(100);
    expect(log.linesTotal).toBe(100);
    expect(log.page({ offset: -1, maxChars: 10 }).header).toBe(
      '[lines 99-99 of 100, 0 remaining; line 99 cut at 10 of 1048576 characters]',
    );
    // The cap, plus one block being filled (here one line of 1 Mi characters).
    expect(maxRetained).toBeLessThanOrEqual(8 * MB + MB + 1);
    expect(log.tail(10)).toBe('xxxxxxxxx\n');
    const read = log.readSince(log.cursorAtStart(), { maxChars: 1000 });
    expect(read.text.length).toBeLessThan(1300);
    expect(read.truncated).toBe(true);
    expect(growth).toBeLessThan(150 * MB);
  });

  it('pages through huge lines kept in the spill reading about as much as the page returns', () => {
    const spill = new MemorySpill({});
    let charsRead = 0;
    const readLines = spill.readLines.bind(spill);
    spill.readLines = (from, count) => {
      const lines = readLines(from, count);
      for (const line of lines) charsRead += line.length;
      return lines;
    };
    const log = new OutputLog({ spill });
    flood(log, enc.encode('x'.repeat(256 * 1024)), 100 * MB);
    // Lines 0-91 have left the 8 MB ring: a page from line 0 reads them from the spill.
    const page = log.page({ offset: 0, length: 1000, maxChars: 30_000 });
    expect(page.lines).toHaveLength(1);
    expect(page.info.remaining_lines).toBe(99);
    // One 1 Mi-character line is needed; reading the 92 in the spill would take 92 Mi characters.
    expect(charsRead).toBeLessThanOrEqual(16 * MB);
  });
});
