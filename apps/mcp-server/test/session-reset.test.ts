import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, isAlive, type ServerHandle, startServer } from './harness.js';

interface SessionRow {
  session_id: string;
  state: string;
  pid?: number;
}

describe('the session shell exits under a command (built server)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  async function session(id: string): Promise<SessionRow | undefined> {
    const { sessions } = await h.ok<{ sessions: SessionRow[] }>('list_sessions', {});
    return sessions.find((s) => s.session_id === id);
  }

  test('exit 3 in the default session: the result says so, and the next result says the shell is new', async () => {
    await h.exec('cd /tmp && export CONCH_RESET_PROBE=kept');
    const oldPid = (await session('default'))?.pid;
    expect(oldPid).toBeGreaterThan(0);
    const ended = await h.call<CommandResult>('execute', { command: 'exit 3' });
    expect(ended.structured.status).toBe('completed');
    expect(ended.structured.exit_code).toBe(3);
    expect(ended.structured.session_ended).toBe(true);
    expect(ended.text).toContain("the session's shell exited; the next command starts a new one");
    expect((await session('default'))?.state).toBe('closed');
    await waitFor(() => !isAlive(oldPid!), { what: 'the old shell to be gone' });

    const next = await h.call<CommandResult>('execute', { command: 'echo "[$CONCH_RESET_PROBE]"; pwd' });
    expect(next.structured.status).toBe('completed');
    expect(next.structured.new_shell).toBe(true);
    expect(next.structured.session_ended).toBeUndefined();
    expect(next.text).toContain('new shell: cwd and environment were reset');
    expect(next.structured.output).toContain('[]');
    // Said once: the command after it runs in the same (new) shell without the notice.
    const after = await h.call<CommandResult>('execute', { command: 'echo again' });
    expect(after.structured.new_shell).toBeUndefined();
    expect(after.text).not.toContain('new shell');
  });

  test('set -e; false in a created session: session_ended, the session is closed, the next command gets SESSION_CLOSED', async () => {
    const created = await h.ok<{ session_id: string }>('create_local', {});
    const id = created.session_id;
    const ended = await h.call<CommandResult>('execute', { command: 'set -e; false', session_id: id });
    expect(ended.structured.status).toBe('completed');
    expect(ended.structured.exit_code).toBe(1);
    expect(ended.structured.session_ended).toBe(true);
    expect(ended.text).toContain("the session's shell exited");
    expect((await session(id))?.state).toBe('closed');
    const refused = await h.call('execute', { command: 'echo hi', session_id: id });
    expect(refused.isError).toBe(true);
    expect(refused.error?.code).toBe('SESSION_CLOSED');
    await h.ok('close_session', { session_id: id });
  });

  test('an ordinary command does not claim the shell ended', async () => {
    const r = await h.call<CommandResult>('execute', { command: 'false' });
    expect(r.structured.exit_code).toBe(1);
    expect(r.structured.session_ended).toBeUndefined();
    expect(r.text).not.toContain('shell exited');
  });
});
