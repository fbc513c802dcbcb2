import { describe, expect, it } from 'vitest';
import { LineRing } from './line-ring.js';

/** Every line the ring still holds, by `get` and by `readInto`. */
function readBack(ring: LineRing): { byGet: (string | undefined)[]; byRead: (string | undefined)[] } {
  const byGet: (string | undefined)[] = [];
  for (let n = ring.firstLine; n < ring.endLine; n++) byGet.push(ring.get(n));
  const byRead: (string | undefined)[] = new Array(ring.endLine - ring.firstLine);
  ring.readInto(ring.firstLine, ring.endLine, byRead, ring.firstLine);
  return { byGet, byRead };
}

describe('LineRing blocks', () => {
  it('reads back lines of blocks whose text is below and above 64 Ki characters', () => {
    const ring = new LineRing({ capChars: 1 << 30, blockChars: 64 * 1024 });
    const lines: string[] = [];
    // Short lines: blocks are sealed at 4096 lines, well under 64 Ki characters.
    for (let i = 0; i < 5000; i++) lines.push(`y${i}`);
    // A block that passes 64 Ki characters: its last line starts under the limit and ends past it.
    lines.push('a'.repeat(60_000), 'b'.repeat(40_000), 'tail');
    // A line longer than 64 Ki characters on its own, then an empty line.
    lines.push('c'.repeat(70_000), '');
    for (const line of lines) ring.push(line);
    ring.seal();
    expect(ring.firstLine).toBe(0);
    expect(ring.endLine).toBe(lines.length);
    const { byGet, byRead } = readBack(ring);
    expect(byGet).toEqual(lines);
    expect(byRead).toEqual(lines);
  });
});
