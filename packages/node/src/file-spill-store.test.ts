import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SPILL_CAP_BYTES, FileSpillStore } from './file-spill-store.js';

const stores: FileSpillStore[] = [];
const scratch: string[] = [];

function newStore(options?: ConstructorParameters<typeof FileSpillStore>[0]): FileSpillStore {
  const store = new FileSpillStore(options);
  stores.push(store);
  return store;
}

afterEach(() => {
  for (const store of stores.splice(0)) store.dispose(true);
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('FileSpillStore', () => {
  it('creates a private directory under the temp dir and 0600 files', () => {
    const store = newStore({ flushBytes: 1 });
    expect(dirname(store.dir)).toBe(tmpdir());
    expect(store.dir).toMatch(/conch-[^/]+$/);
    expect(mode(store.dir)).toBe(0o700);
    const sink = store.create('c_abc123');
    sink.appendLines(['x']);
    expect(sink.path).toBe(join(store.dir, 'c_abc123.log'));
    expect(mode(sink.path!)).toBe(0o600);
  });

  it('writes each line with a newline, readable in the file', () => {
    const store = newStore({ flushBytes: 1 }); // small enough to create the file at once
    const sink = store.create('c_1');
    sink.appendLines(['hello', 'wörld ✓', '']);
    sink.appendLines(['last']);
    expect(sink.storedLines).toBe(4);
    sink.close(false);
    expect(readFileSync(sink.path!, 'utf8')).toBe('hello\nwörld ✓\n\nlast\n');
    expect(sink.readLines(0, 10)).toEqual(['hello', 'wörld ✓', '', 'last']);
  });

  it('keeps line numbers exact when a line contains a newline', () => {
    const sink = newStore().create('c_nl');
    sink.appendLines(['a\nb', 'c']);
    expect(sink.readLines(0, 5)).toEqual(['a\u2424b', 'c']);
  });

  it('reads unflushed lines (buffered writes are flushed before reading)', () => {
    const sink = newStore({ flushBytes: 1 << 20 }).create('c_buf');
    sink.appendLines(['x', 'y']);
    expect(sink.readLines(1, 1)).toEqual(['y']);
    sink.appendLines(['z']);
    expect(sink.readLines(0, 10)).toEqual(['x', 'y', 'z']);
  });

  it('keeps every line at its place when ASCII and non-ASCII batches alternate across index marks', () => {
    const sink = newStore({ flushBytes: 4096 }).create('c_mixed');
    const all: string[] = [];
    for (let batch = 0; batch < 12; batch++) {
      // Batches of 100 (not a multiple of the index interval): marks fall inside batches of both kinds.
      const lines = Array.from({ length: 100 }, (_, i) => {
        const n = batch * 100 + i;
        if (batch % 3 === 1) return `é ${n} ✓`;
        if (batch % 3 === 2 && i === 50) return `a\nb ${n}`;
        return `${n}`;
      });
      sink.appendLines(lines);
      all.push(...lines.map((line) => line.replaceAll('\n', '\u2424')));
    }
    expect(sink.storedLines).toBe(1200);
    for (const from of [0, 255, 256, 257, 511, 512, 700, 1023, 1024, 1199]) {
      expect(sink.readLines(from, 3), `from ${from}`).toEqual(all.slice(from, from + 3));
    }
    sink.close(false);
    expect(readFileSync(sink.path!, 'utf8')).toBe(`${all.join('\n')}\n`);
  });

  it('reads any page of a 1,000,000-line file, starting from its sparse index', () => {
    const sink = newStore().create('c_big');
    const total = 1_000_000;
    const line = (i: number): string =>
      i % 7 === 0 ? `line ${i} — ünïcode ✓ ${'x'.repeat(i % 50)}` : `line ${i}`;
    const batch: string[] = [];
    for (let i = 0; i < total; i++) {
      batch.push(line(i));
      if (batch.length === 10_000) sink.appendLines(batch.splice(0));
    }
    sink.appendLines(batch);
    expect(sink.storedLines).toBe(total);

    const expected = (from: number) =>
      Array.from({ length: Math.min(1000, total - from) }, (_, k) => line(from + k));
    for (const from of [0, 1, 255, 256, 257, 511, 123_456, 500_000, 999_000, 999_999]) {
      expect(sink.readLines(from, 1000)).toEqual(expected(from));
    }

    expect(sink.readLines(total, 10)).toEqual([]);
    expect(sink.readLines(total + 5, 10)).toEqual([]);
    expect(sink.readLines(10, 0)).toEqual([]);
    expect(sink.readLines(10, -1)).toEqual([]);
    expect(sink.readLines(-3, 2)).toEqual([line(0), line(1)]);
    expect(sink.readLines(999_998, 100)).toEqual([line(999_998), line(999_999)]);
    // A page is found through the index, not by counting lines from the start: with the first lines'
    // newlines overwritten, the first block reads differently, and every later page exactly as before.
    const fd = openSync(sink.path!, 'r+');
    writeSync(fd, Buffer.alloc(200, 'x'), 0, 200, 0);
    closeSync(fd);
    expect(sink.readLines(0, 1)).not.toEqual([line(0)]);
    for (const from of [256, 257, 123_456, 999_000, 999_999]) {
      expect(sink.readLines(from, 1000)).toEqual(expected(from));
    }
  }, 30_000);

  it('reads lines longer than the read chunk', () => {
    const sink = newStore().create('c_long');
    const long = 'y'.repeat(200_000);
    sink.appendLines(['a', long, 'b', `${long}z`]);
    expect(sink.readLines(1, 3)).toEqual([long, 'b', `${long}z`]);
    expect(sink.readLines(3, 1)).toEqual([`${long}z`]);
  });

  it('stops storing at the cap and reports storedLines', () => {
    const sink = newStore({ maxBytesPerCommand: 100 }).create('c_cap');
    sink.appendLines(Array.from({ length: 30 }, (_, i) => `line ${String(i).padStart(2, '0')}`)); // 8 bytes each
    expect(sink.storedLines).toBe(12); // 12 * 8 = 96 ≤ 100 < 104
    expect(sink.full).toBe(true);
    sink.appendLines(['x']); // would fit, but storing has stopped
    expect(sink.storedLines).toBe(12);
    expect(sink.readLines(10, 10)).toEqual(['line 10', 'line 11']);
    sink.close(false);
    expect(statSync(sink.path!).size).toBe(96);
    expect(DEFAULT_SPILL_CAP_BYTES).toBe(256 * 1024 * 1024);
  });

  it('counts the cap in UTF-8 bytes', () => {
    const sink = newStore({ maxBytesPerCommand: 10 }).create('c_utf8');
    sink.appendLines(['ééé', 'é']); // 7 bytes, then 3 more would make 10
    expect(sink.storedLines).toBe(2);
    sink.appendLines(['a']);
    expect(sink.storedLines).toBe(2);
  });

  it('close(false) keeps the file readable; close(true) removes it', () => {
    const store = newStore({ flushBytes: 1 }); // small enough to create the file at once
    const sink = store.create('c_close');
    sink.appendLines(['one', 'two']);
    sink.close(false);
    const path = sink.path!;
    expect(existsSync(path)).toBe(true);
    expect(sink.readLines(1, 1)).toEqual(['two']);
    sink.appendLines(['three']); // ignored after close
    expect(sink.storedLines).toBe(2);
    sink.close(true);
    expect(existsSync(path)).toBe(false);
    expect(sink.path).toBeUndefined();
    expect(sink.readLines(0, 1)).toEqual([]);
    sink.close(true); // harmless
  });

  it('gives every command its own file, even with odd or repeated ids', () => {
    const store = newStore({ flushBytes: 1 });
    const a = store.create('c_same');
    const b = store.create('c_same');
    const c = store.create('../../etc/passwd');
    for (const sink of [a, b, c]) sink.appendLines(['line']);
    expect(a.path).not.toBe(b.path);
    expect(dirname(c.path!)).toBe(store.dir);
    a.appendLines(['a']);
    b.appendLines(['b']);
    expect(a.readLines(0, 2)).toEqual(['line', 'a']);
    expect(b.readLines(0, 2)).toEqual(['line', 'b']);
  });

  it('creates no file for a small log, and one as soon as the log outgrows the buffer', () => {
    const store = newStore({ flushBytes: 100 });
    const small = store.create('c_small');
    small.appendLines(['tiny', 'log']);
    small.close(false);
    expect(small.path).toBeUndefined();
    expect(small.readLines(0, 5)).toEqual(['tiny', 'log']);
    const big = store.create('c_big');
    big.appendLines(Array.from({ length: 50 }, (_, i) => `line ${i}`));
    expect(big.path).toBe(join(store.dir, 'c_big.log'));
    expect(readFileSync(big.path!, 'utf8').split('\n')[0]).toBe('line 0');
    expect(big.readLines(49, 1)).toEqual(['line 49']);
  });

  it('does not follow a planted symlink', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conch-test-'));
    scratch.push(dir);
    const target = join(dir, 'target');
    writeFileSync(target, 'secret');
    const spill = join(dir, 'spill');
    const store = newStore({ dir: spill });
    symlinkSync(target, join(spill, 'c_link.log'));
    const sink = store.create('c_link');
    sink.appendLines(['x']);
    sink.close(false);
    expect(readFileSync(target, 'utf8')).toBe('secret');
    expect(sink.path).not.toBe(join(spill, 'c_link.log'));
  });

  it('dispose() closes and removes everything, including the directory', () => {
    const store = newStore();
    const a = store.create('c_a');
    a.appendLines(['x']);
    store.dispose();
    expect(existsSync(store.dir)).toBe(false);
    expect(() => store.create('c_b')).toThrow(/disposed/);
    store.dispose(); // harmless
  });

  it('dispose(false) keeps the files', () => {
    const store = new FileSpillStore();
    scratch.push(store.dir);
    const sink = store.create('c_keep');
    sink.appendLines(['kept']);
    store.dispose(false);
    expect(readFileSync(sink.path!, 'utf8')).toBe('kept\n');
  });

  it('uses a given directory, creating it 0700, and removes only what it created', () => {
    const parent = mkdtempSync(join(tmpdir(), 'conch-test-'));
    scratch.push(parent);
    const created = join(parent, 'a', 'spill');
    const store = newStore({ dir: created });
    expect(store.dir).toBe(created);
    expect(mode(created)).toBe(0o700);
    store.create('c_x').appendLines(['x']);
    store.dispose();
    expect(existsSync(created)).toBe(false);

    const store2 = newStore({ dir: parent });
    expect(mode(parent)).toBe(0o700);
    const sink = store2.create('c_y');
    sink.appendLines(['y']);
    const path = sink.path!;
    store2.dispose();
    expect(existsSync(parent)).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses a directory that is a file', () => {
    const parent = mkdtempSync(join(tmpdir(), 'conch-test-'));
    scratch.push(parent);
    const file = join(parent, 'file');
    writeFileSync(file, '');
    expect(() => new FileSpillStore({ dir: file })).toThrow();
  });
});
