import { describe, expect, it } from 'vitest';
import { MarkerParser, type StreamPiece } from './marker-parser.js';

const enc = (s: string) => new TextEncoder().encode(s);
const NONCE = 'abcdefgh12345678';
const m = (body: string, nonce = NONCE) => `\x1b]6973;${nonce};${body}\x07`;

function parseAll(chunks: string[]): { data: string; markers: unknown[] } {
  const parser = new MarkerParser(NONCE);
  const pieces: StreamPiece[] = [];
  for (const c of chunks) pieces.push(...parser.push(enc(c)));
  pieces.push(...parser.flush());
  let data = '';
  const markers: unknown[] = [];
  for (const p of pieces) {
    if (p.type === 'data') data += new TextDecoder().decode(p.bytes);
    else markers.push(p.marker);
  }
  return { data, markers };
}

describe('MarkerParser', () => {
  const stream = `echo line\r\n${m('S;c_abc')}hello\r\n${m('E;c_abc;0;/tmp/a;b')}$ `;

  it('splits data and markers', () => {
    const { data, markers } = parseAll([stream]);
    expect(data).toBe('echo line\r\nhello\r\n$ ');
    expect(markers).toEqual([
      { type: 'start', commandId: 'c_abc' },
      { type: 'end', commandId: 'c_abc', status: 0, cwd: '/tmp/a;b' },
    ]);
  });

  it('finds markers split across chunks at every byte position', () => {
    for (let i = 0; i <= stream.length; i++) {
      const { data, markers } = parseAll([stream.slice(0, i), stream.slice(i)]);
      expect(data).toBe('echo line\r\nhello\r\n$ ');
      expect(markers).toHaveLength(2);
    }
  });

  it('finds markers fed one byte at a time', () => {
    const { data, markers } = parseAll(stream.split(''));
    expect(data).toBe('echo line\r\nhello\r\n$ ');
    expect(markers).toHaveLength(2);
  });

  it('passes through markers with another nonce (e.g. printed by a program) as data', () => {
    const fake = m('E;c_abc;0;/', 'zzzzzzzzzzzzzzzz');
    const { data, markers } = parseAll([`x${fake}y`]);
    expect(markers).toEqual([]);
    expect(data).toBe(`x${fake}y`);
  });

  it('passes through other escape sequences untouched, even split', () => {
    const text = 'a\x1b[31mred\x1b[0m\x1b]0;title\x07b';
    for (let i = 0; i <= text.length; i++) {
      expect(parseAll([text.slice(0, i), text.slice(i)]).data).toBe(text);
    }
  });

  it('reads ready markers and unknown statuses', () => {
    const { markers } = parseAll([m('R;/home/u'), m('E;c_x;;/')]);
    expect(markers).toEqual([
      { type: 'ready', cwd: '/home/u' },
      { type: 'end', commandId: 'c_x', status: null, cwd: '/' },
    ]);
  });

  it('reads the snapshot-written marker that follows an end marker, and never passes it on as output', () => {
    const text = `${m('E;c_abc;0;/')}${m('D;c_abc;0')}$ `;
    for (let i = 0; i <= text.length; i++) {
      const { data, markers } = parseAll([text.slice(0, i), text.slice(i)]);
      expect(data).toBe('$ ');
      expect(markers).toEqual([
        { type: 'end', commandId: 'c_abc', status: 0, cwd: '/' },
        { type: 'snapshot', commandId: 'c_abc', written: true },
      ]);
    }
  });

  it('reads a snapshot that could not be written whole', () => {
    expect(parseAll([m('D;c_abc;1')]).markers).toEqual([
      { type: 'snapshot', commandId: 'c_abc', written: false },
    ]);
  });

  it('ignores malformed marker bodies', () => {
    const { markers, data } = parseAll([
      m('Q;what'),
      m('S;bad id!'),
      m('D;bad id!;0'),
      m('D;c_abc'),
      m('D;c_abc;'),
    ]);
    expect(markers).toEqual([]);
    expect(data).toContain('Q;what');
  });
});
