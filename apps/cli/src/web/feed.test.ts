import { describe, expect, it } from 'vitest';
import { SupervisionFeed } from './feed.js';

describe('SupervisionFeed', () => {
  it('keeps what the engine records, passes it on to the audit log unchanged, and stays bounded', () => {
    const written: unknown[] = [];
    const feed = new SupervisionFeed(3, 10);
    const sink = feed.auditSink({ record: (entry) => written.push(entry) });
    let heard = 0;
    const stop = feed.onRecord(() => heard++);
    for (const input of ['one', 'two', 'three', 'a much longer input']) {
      sink.record({ kind: 'execute', session_id: 'default', input, decision: 'allow', reason: 'ok' });
    }
    expect(written).toHaveLength(4);
    expect(written[3]).toEqual({
      kind: 'execute',
      session_id: 'default',
      input: 'a much longer input',
      decision: 'allow',
      reason: 'ok',
    });
    const kept = feed.records();
    expect(kept.map((r) => r.input)).toEqual(['two', 'three', 'a much lo…']);
    expect(kept.map((r) => r.seq)).toEqual([2, 3, 4]);
    expect(Number.isNaN(Date.parse(kept[0]!.time))).toBe(false);
    expect(feed.records(3).map((r) => r.seq)).toEqual([4]);
    expect(feed.records(4)).toEqual([]);
    expect(heard).toBe(4);
    stop();
    sink.record({ kind: 'check', input: 'x', decision: 'deny', reason: 'no' });
    expect(heard).toBe(4);
  });

  it('works without an audit log, and remembers the commands a person held the terminal for', () => {
    const feed = new SupervisionFeed();
    feed
      .auditSink()
      .record({ kind: 'attach', by: 'person', input: 'make', decision: 'allow', reason: 'typed' });
    expect(feed.records()[0]).toMatchObject({ by: 'person', input: 'make' });
    const start = { text: 'ls', isolated: true, background: false };
    feed.noteCommand({ ...start, command_id: 'c_1', held_by_person: true });
    feed.noteCommand({ ...start, command_id: 'c_2', held_by_person: false });
    expect(feed.heldByPerson('c_1')).toBe(true);
    expect(feed.heldByPerson('c_2')).toBe(false);
  });
});
