import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAuditLog } from './audit.js';

const dir = mkdtempSync(join(tmpdir(), 'conch-policy-audit-'));
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('createAuditLog', () => {
  it('appends one JSON line per record, in a 0600 file in a new 0700 directory', () => {
    const path = join(dir, 'sub', 'audit.jsonl');
    const log = createAuditLog(path);
    log.record({
      kind: 'execute',
      session_id: 's1',
      command_id: 'c1',
      input: 'git status',
      decision: 'allow',
      reason: 'ok',
      time: new Date(0),
    });
    log.record({ kind: 'check', input: 'rm x', decision: 'deny', reason: 'Denied: rm' });
    log.close();
    log.record({ kind: 'check', input: 'after close', decision: 'allow', reason: '' });
    expect(lines(path)).toEqual([
      {
        time: '1970-01-01T00:00:00.000Z',
        kind: 'execute',
        session_id: 's1',
        command_id: 'c1',
        input: 'git status',
        decision: 'allow',
        reason: 'ok',
      },
      { time: expect.any(String), kind: 'check', input: 'rm x', decision: 'deny', reason: 'Denied: rm' },
    ]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700);
    expect(log.path).toBe(path);
  });

  it("writes who typed a line when it was a person's (conch attach), never for the agent's", () => {
    const path = join(dir, 'by.jsonl');
    const log = createAuditLog(path);
    log.record({
      kind: 'attach',
      by: 'person',
      session_id: 's1',
      input: 'ls',
      decision: 'allow',
      reason: 'r',
    });
    log.record({ kind: 'execute', input: 'ls', decision: 'allow', reason: 'r' });
    log.close();
    const [person, agent] = lines(path);
    expect(Object.keys(person ?? {})).toEqual([
      'time',
      'kind',
      'by',
      'session_id',
      'input',
      'decision',
      'reason',
    ]);
    expect(person).toMatchObject({ kind: 'attach', by: 'person', input: 'ls' });
    expect(agent).not.toHaveProperty('by');
  });

  it('never writes input marked secret', () => {
    const path = join(dir, 'secret.jsonl');
    const log = createAuditLog(path);
    log.record({ kind: 'respond', input: 'hunter2', decision: 'allow', reason: 'typed', secret: true });
    log.close();
    expect(readFileSync(path, 'utf8')).not.toContain('hunter2');
    expect(lines(path)[0]?.input).toBe('[secret]');
  });

  it('appends to an existing log and tightens its mode', () => {
    const path = join(dir, 'existing.jsonl');
    writeFileSync(path, '{"old":true}\n');
    chmodSync(path, 0o644);
    const log = createAuditLog(path);
    log.record({ kind: 'execute', input: 'ls', decision: 'allow', reason: 'r' });
    log.close();
    expect(lines(path)).toHaveLength(2);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
