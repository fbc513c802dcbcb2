import { afterEach, describe, expect, it } from 'vitest';
import { clampScreenDimension, createXtermScreen, XtermScreenRenderer } from './xterm-screen.js';

const renderers: XtermScreenRenderer[] = [];
const encoder = new TextEncoder();
const bytes = (s: string): Uint8Array => encoder.encode(s);

function screen(cols = 20, rows = 5): XtermScreenRenderer {
  const r = new XtermScreenRenderer(cols, rows);
  renderers.push(r);
  return r;
}

afterEach(() => {
  for (const r of renderers.splice(0)) r.dispose();
});

describe('XtermScreenRenderer', () => {
  it('renders plain text with trailing spaces trimmed', async () => {
    const s = screen();
    s.write(bytes('hello   \r\nworld'));
    expect(await s.snapshot()).toEqual({
      rows: ['hello', 'world', '', '', ''],
      cursor: { row: 1, col: 5 },
      alt_screen: false,
      cols: 20,
      rows_count: 5,
    });
  });

  it('waits for every pending write, including UTF-8 split across chunks', async () => {
    const s = screen();
    const all = bytes('größe ✓');
    for (const b of all) s.write(Uint8Array.of(b));
    const snap = await s.snapshot();
    expect(snap.rows[0]).toBe('größe ✓');
    expect(snap.cursor).toEqual({ row: 0, col: 7 });
  });

  it('does not depend on the caller keeping its buffer intact', async () => {
    const s = screen();
    const buffer = bytes('abc');
    s.write(buffer);
    buffer.set(bytes('xyz'));
    expect((await s.snapshot()).rows[0]).toBe('abc');
  });

  it('follows cursor movement', async () => {
    const s = screen();
    s.write(bytes('\x1b[3;5Hx\x1b[1;1Hy\x1b[2B\x1b[5Cz\x1b[10;30H'));
    const snap = await s.snapshot();
    expect(snap.rows).toEqual(['y', '', '    x z', '', '']);
    expect(snap.cursor).toEqual({ row: 4, col: 19 }); // clamped to the screen
  });

  it('clears the screen', async () => {
    const s = screen();
    s.write(bytes('one\r\ntwo\r\nthree'));
    s.write(bytes('\x1b[2J\x1b[H'));
    s.write(bytes('fresh'));
    const snap = await s.snapshot();
    expect(snap.rows).toEqual(['fresh', '', '', '', '']);
    expect(snap.cursor).toEqual({ row: 0, col: 5 });
  });

  it('erases in line and overwrites with carriage return', async () => {
    const s = screen();
    s.write(bytes('progress 10%\rprogress 100%\r\nabcdef\x1b[3D\x1b[K'));
    expect((await s.snapshot()).rows.slice(0, 2)).toEqual(['progress 100%', 'abc']);
  });

  it('shows the bottom of the screen after scrolling', async () => {
    const s = screen(10, 3);
    s.write(bytes(Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\r\n')));
    const snap = await s.snapshot();
    expect(snap.rows).toEqual(['line 7', 'line 8', 'line 9']);
    expect(snap.cursor).toEqual({ row: 2, col: 6 });
  });

  it('enters and leaves the alternate screen', async () => {
    const s = screen();
    s.write(bytes('$ vim notes.txt'));
    s.write(bytes('\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n\x1b[5;1H"notes.txt" 0L'));
    let snap = await s.snapshot();
    expect(snap.alt_screen).toBe(true);
    expect(snap.rows).toEqual(['~', '~', '', '', '"notes.txt" 0L']);
    s.write(bytes('\x1b[?1049l'));
    snap = await s.snapshot();
    expect(snap.alt_screen).toBe(false);
    expect(snap.rows[0]).toBe('$ vim notes.txt');
    expect(snap.cursor).toEqual({ row: 0, col: 15 });
  });

  it('tracks application cursor mode', async () => {
    const s = screen();
    expect(await s.applicationCursorKeys()).toBe(false);
    s.write(bytes('\x1b[?1h'));
    expect(await s.applicationCursorKeys()).toBe(true);
    s.write(bytes('\x1b[?1l'));
    expect(await s.applicationCursorKeys()).toBe(false);
  });

  it('resizes, in order with the writes before it', async () => {
    const s = screen(20, 5);
    s.write(bytes('0123456789abcdefghij'.slice(0, 15)));
    s.resize(10, 3);
    s.write(bytes('\r\nnext'));
    let snap = await s.snapshot();
    expect(snap.cols).toBe(10);
    expect(snap.rows_count).toBe(3);
    expect(snap.rows).toHaveLength(3);
    expect(snap.rows.join('\n')).toContain('next');
    s.resize(40, 6);
    snap = await s.snapshot();
    expect(snap.cols).toBe(40);
    expect(snap.rows_count).toBe(6);
    expect(snap.rows).toHaveLength(6);
  });

  it('clamps sizes to 1..1000', async () => {
    const s = screen(5000, 0);
    let snap = await s.snapshot();
    expect(snap.cols).toBe(1000);
    expect(snap.rows_count).toBe(1);
    s.resize(-4, 2000);
    snap = await s.snapshot();
    expect(snap.cols).toBe(2); // xterm's own minimum
    expect(snap.rows_count).toBe(1000);
    s.resize(Number.NaN, 7.9);
    snap = await s.snapshot();
    expect(snap.cols).toBe(2);
    expect(snap.rows_count).toBe(7);
    expect(clampScreenDimension(Number.POSITIVE_INFINITY, 80)).toBe(80);
    expect(clampScreenDimension(0, 80)).toBe(1);
  });

  it('replies to terminal queries through onReply', async () => {
    const s = screen();
    const replies: string[] = [];
    const sub = s.onReply((d) => replies.push(d));
    s.write(bytes('ab\x1b[6n'));
    await s.snapshot();
    expect(replies).toEqual(['\x1b[1;3R']);
    sub.dispose();
  });

  it('keeps up with a flood and stays bounded', async () => {
    const s = screen(80, 24);
    const chunk = bytes('y\r\n'.repeat(10_000));
    for (let i = 0; i < 100; i++) s.write(chunk);
    s.write(bytes('done'));
    const snap = await s.snapshot();
    expect(snap.rows[23]).toBe('done');
    expect(snap.rows[22]).toBe('y');
  });

  it('after dispose, snapshots return the last screen and writes are ignored', async () => {
    const s = screen();
    s.write(bytes('bye'));
    const pending = s.snapshot();
    s.dispose();
    s.write(bytes('ignored'));
    s.resize(50, 50);
    const last = await pending;
    expect(await s.snapshot()).toEqual(last);
    s.dispose();
  });

  it('disposed before any screen was asked for, it shows the blank screen of its last size', async () => {
    const s = screen(20, 5);
    s.resize(12, 3);
    s.write(bytes('never parsed'));
    s.dispose();
    expect(await s.snapshot()).toEqual({
      rows: ['', '', ''],
      cursor: { row: 0, col: 0 },
      alt_screen: false,
      cols: 12,
      rows_count: 3,
    });
  });

  it('createXtermScreen is a ScreenFactory', async () => {
    const s = createXtermScreen(30, 4);
    const snap = await s.snapshot();
    expect(snap).toEqual({
      rows: ['', '', '', ''],
      cursor: { row: 0, col: 0 },
      alt_screen: false,
      cols: 30,
      rows_count: 4,
    });
    s.dispose();
  });
});
