/**
 * A session is named by its id or by its name, in every tool that takes a `session_id`: the REAL built
 * server over stdio. An id wins over a name; a name that several sessions carry is refused naming them.
 */

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';

interface SessionInfo {
  session_id: string;
  name: string;
}

describe('session references: an id, else a unique name', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('execute, list_processes and close_session take a session name', async () => {
    const work = await h.ok<SessionInfo>('create_local', { name: 'work' });
    const cd = await h.exec('cd /tmp', { session_id: 'work' });
    expect(cd.session_id).toBe(work.session_id);
    const pwd = await h.exec('pwd', { session_id: 'work' });
    expect(pwd.output.trim()).toBe('/tmp');
    const listed = await h.ok<{ processes: { command_id: string }[] }>('list_processes', {
      session_id: 'work',
      include_finished: true,
    });
    expect(listed.processes.map((p) => p.command_id)).toEqual([cd.command_id, pwd.command_id]);
    const closed = await h.ok<{ session_id: string }>('close_session', { session_id: 'work' });
    expect(closed.session_id).toBe(work.session_id);
    const gone = await h.call('execute', { command: 'true', session_id: 'work' });
    expect(gone.error?.code).toBe('SESSION_NOT_FOUND');
  });

  test('a name two sessions carry is INVALID_ARGUMENT naming both ids; each id still works', async () => {
    const a = await h.ok<SessionInfo>('create_local', { name: 'twin' });
    const b = await h.ok<SessionInfo>('create_local', { name: 'twin' });
    const r = await h.call('execute', { command: 'true', session_id: 'twin' });
    expect(r.error?.code).toBe('INVALID_ARGUMENT');
    expect(r.text).toContain(a.session_id);
    expect(r.text).toContain(b.session_id);
    const byId = await h.ok<CommandResult>('execute', { command: 'echo ok', session_id: b.session_id });
    expect(byId.session_id).toBe(b.session_id);
    await h.ok('close_session', { session_id: a.session_id });
    // With one left, the name is unique again.
    const unique = await h.exec('echo again', { session_id: 'twin' });
    expect(unique.session_id).toBe(b.session_id);
    await h.ok('close_session', { session_id: 'twin' });
  });
});
