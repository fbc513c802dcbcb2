import { describe, expect, test } from 'vitest';
import type { ProcessInfo } from '../types.js';
import { cutListedCommands } from './listing.js';

const row = (command: string): ProcessInfo => ({
  command_id: 'c_0000000000',
  session_id: 'default',
  command,
  pid: 1,
  state: 'exited',
  exit_code: 0,
  signal: null,
  background: false,
  isolated: false,
  started_at: '2026-01-01T00:00:00.000Z',
  duration_ms: 1,
  output_bytes: 0,
});

describe('cutListedCommands', () => {
  test('short texts stay whole; a long one is cut to the row limit, ends in …, and says its length', () => {
    const [short, long] = cutListedCommands([row('ls'), row('x'.repeat(5000))], {
      listedCommandChars: 100,
      listingChars: 1_000_000,
    });
    expect(short).toEqual(row('ls'));
    expect(long?.command).toHaveLength(100);
    expect(long?.command.endsWith('…')).toBe(true);
    expect(long?.command_chars).toBe(5000);
  });

  test('many rows share the listing: the whole listing stays within its characters', () => {
    const rows = Array.from({ length: 500 }, () => row('y'.repeat(10_000)));
    const cut = cutListedCommands(rows, { listedCommandChars: 2000, listingChars: 100_000 });
    const total = cut.reduce((sum, p) => sum + p.command.length, 0);
    expect(total).toBeLessThanOrEqual(100_000);
    expect(cut.every((p) => p.command_chars === 10_000)).toBe(true);
  });

  test('a cut never splits a surrogate pair', () => {
    const [p] = cutListedCommands([row('🐚'.repeat(100))], { listedCommandChars: 10, listingChars: 1000 });
    expect(/\p{Cs}/u.test(p?.command ?? '')).toBe(false);
  });
});
