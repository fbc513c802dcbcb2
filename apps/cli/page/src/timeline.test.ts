import { describe, expect, it } from 'vitest';
import type { WebCommand, WebRecord, WebSession } from '../../src/web/protocol.js';
import { formatBytes, formatDuration, formatTime } from './format.js';
import { timelineOf } from './timeline.js';

const session = { session_id: 's_1', name: 'build' } as WebSession;

function command(id: string, started: string, extra: Partial<WebCommand> = {}): WebCommand {
  return {
    command_id: id,
    session_id: 's_1',
    command: `cmd ${id}`,
    pid: 1,
    state: 'exited',
    exit_code: 0,
    signal: null,
    background: false,
    isolated: false,
    started_at: started,
    duration_ms: 12,
    output_bytes: 3,
    ...extra,
  };
}

function record(seq: number, time: string, extra: Partial<WebRecord>): WebRecord {
  return { seq, time, kind: 'attach', input: 'make', decision: 'allow', reason: 'typed', ...extra };
}

describe('timelineOf', () => {
  it("merges the agent's commands and the person's lines of one session, in the order they started", () => {
    const rows = timelineOf(
      session,
      [
        command('c_2', '2026-01-01T00:00:03.000Z', { isolated: true, held_by_person: true }),
        command('c_1', '2026-01-01T00:00:01.000Z'),
        command('c_9', '2026-01-01T00:00:02.000Z', { session_id: 's_other' }),
        command('c_3', '2026-01-01T00:00:04.000Z', {
          state: 'running',
          exit_code: null,
          duration_ms: undefined,
        }),
      ],
      [
        record(1, '2026-01-01T00:00:02.000Z', { by: 'person', session_id: 'build' }),
        record(2, '2026-01-01T00:00:02.500Z', { session_id: 's_1', kind: 'execute' }),
        record(3, '2026-01-01T00:00:02.600Z', { by: 'person', session_id: 's_other' }),
      ],
      Date.parse('2026-01-01T00:00:05.000Z'),
    );
    expect(rows.map((r) => [r.key, r.who, r.state])).toEqual([
      ['c_1', 'agent', 'exited'],
      ['r1', 'person', 'typed'],
      ['c_2', 'agent', 'exited'],
      ['c_3', 'agent', 'running'],
    ]);
    expect(rows[2]).toMatchObject({ how: ['isolated', 'a person held the terminal'], exit_code: 0 });
    expect(rows[3]).toMatchObject({ duration_ms: 1000 });
    expect(rows[3]).not.toHaveProperty('exit_code');
  });
});

describe('format', () => {
  it('writes durations, sizes and times for people', () => {
    expect([9, 1234, 42_000, 185_000, 7_500_000].map(formatDuration)).toEqual([
      '9 ms',
      '1.2 s',
      '42 s',
      '3 min 5 s',
      '2 h 5 min',
    ]);
    expect([0, 512, 1536, 3 * 1024 * 1024].map(formatBytes)).toEqual(['0 B', '512 B', '1.5 KB', '3.0 MB']);
    expect(formatTime('not a time')).toBe('not a time');
    expect(formatTime(new Date(2026, 0, 1, 9, 5, 7).toISOString())).toBe('09:05:07');
  });
});
