import { randomBytes } from 'node:crypto';
import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type CommandResult,
  descendants,
  isAlive,
  pidsWithEnv,
  type ServerHandle,
  startServer,
} from './harness.js';

interface ProcessRow {
  command_id: string;
  command: string;
  pid: number | null;
  state: string;
  background: boolean;
  isolated: boolean;
}

describe('background processes and kills (real PTY, built server over stdio)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a background sleep 300 is listed by list_processes, then killed with its tree', async () => {
    const r = await h.exec('sleep 300', { background: true });
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('background');
    expect(r.isolated).toBe(true);
    const listed = await h.ok<{ processes: ProcessRow[] }>('list_processes', { filter: 'sleep 300' });
    const row = listed.processes.find((p) => p.command_id === r.command_id);
    expect(row).toBeDefined();
    expect(row!.state).toBe('running');
    expect(row!.background).toBe(true);
    expect(row!.pid).toBeGreaterThan(0);
    const running = await h.ok<{ processes: ProcessRow[] }>('list_processes', { include_finished: false });
    expect(running.processes.map((p) => p.command_id)).toContain(r.command_id);
    expect(pidsWithEnv('CONCH_COMMAND_ID', r.command_id).length).toBeGreaterThan(0);

    const kill = await h.ok<{ result: string; survivors: number[]; command_id: string }>('kill_process', {
      command_id: r.command_id,
    });
    expect(kill.result).toBe('killed');
    expect(kill.survivors).toEqual([]);
    expect(isAlive(row!.pid!)).toBe(false);
    expect(pidsWithEnv('CONCH_COMMAND_ID', r.command_id)).toEqual([]);
    const after = await h.ok<CommandResult>('read_output', { command_id: r.command_id, pause_timeout: 0 });
    expect(after.status).toBe('completed');
    expect(after.state).toBe('killed');
    // Killing again is harmless.
    const again = await h.ok<{ result: string }>('kill_process', { command_id: r.command_id });
    expect(again.result).toBe('already_exited');
  });

  test('kill_process also kills a double-forked escaped process of a background command', async () => {
    const r = await h.exec('(setsid sleep 301 >/dev/null 2>&1 &); sleep 302', { background: true });
    expect(r.status).toBe('partial');
    const escaped = await waitFor(
      () => {
        const pids = pidsWithEnv('CONCH_COMMAND_ID', r.command_id);
        return pids.length >= 2 ? pids : undefined;
      },
      { what: 'both sleeps to start' },
    );
    const kill = await h.ok<{ result: string; survivors: number[] }>('kill_process', {
      command_id: r.command_id,
      grace_s: 1,
    });
    expect(kill.result).toBe('killed');
    expect(kill.survivors).toEqual([]);
    for (const pid of escaped) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    expect(pidsWithEnv('CONCH_COMMAND_ID', r.command_id)).toEqual([]);
  });

  test('kill_process kills the escaped daemon of a background command that has already ended', async () => {
    const r = await h.exec("setsid sh -c 'sleep 410 &'; echo started", { background: true });
    const done =
      r.status === 'completed'
        ? r
        : await h.ok<CommandResult>('read_output', { command_id: r.command_id, pause_timeout: 5 });
    expect(done.status).toBe('completed');
    expect(done.output).toContain('started');
    const escaped = await waitFor(
      () => {
        const pids = pidsWithEnv('CONCH_COMMAND_ID', r.command_id);
        return pids.length > 0 ? pids : undefined;
      },
      { what: 'the escaped sleep to be seen' },
    );
    // list_processes shows what the ended command left running, in the structure and the text.
    const listed = await h.call('list_processes', { filter: r.command_id });
    const row = (listed.structured as { processes: (ProcessRow & { escaped_pids?: number[] })[] })
      .processes[0];
    expect(row?.state).toBe('exited');
    expect(row?.escaped_pids).toEqual([...escaped].sort((a, b) => a - b));
    expect(listed.text).toContain(`left running: ${row?.escaped_pids?.join(', ')}`);
    const kill = await h.ok<{ result: string; survivors: number[]; exit_code: number | null }>(
      'kill_process',
      { command_id: r.command_id, grace_s: 1 },
    );
    expect(kill.result).toBe('killed');
    expect(kill.survivors).toEqual([]);
    expect(kill.exit_code).toBe(0);
    for (const pid of escaped) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    const relisted = await h.ok<{ processes: { escaped_pids?: number[] }[] }>('list_processes', {
      filter: r.command_id,
    });
    expect(relisted.processes[0]?.escaped_pids).toBeUndefined();
    // Nothing tagged with the id is left, so a second kill has nothing to do.
    const again = await h.ok<{ result: string }>('kill_process', { command_id: r.command_id });
    expect(again.result).toBe('already_exited');
  });

  test('kill_process kills a `&` job that a finished foreground command left, and spares the session', async () => {
    const s = await h.ok<{ session_id: string }>('create_local', {});
    const r = await h.exec('sleep 411 >/dev/null 2>&1 & echo launched', { session_id: s.session_id });
    expect(r.status).toBe('completed');
    const jobs = await waitFor(
      () => {
        const pids = pidsWithEnv('CONCH_COMMAND_ID', r.command_id);
        return pids.length > 0 ? pids : undefined;
      },
      { what: 'the & job to be seen' },
    );
    const kill = await h.ok<{ result: string; survivors: number[] }>('kill_process', {
      command_id: r.command_id,
      grace_s: 1,
    });
    expect(kill.result).toBe('killed');
    for (const pid of jobs) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    const next = await h.exec('echo still-here', { session_id: s.session_id });
    expect(next.status).toBe('completed');
    expect(next.output).toContain('still-here');
    await h.ok('close_session', { session_id: s.session_id });
  });

  test('kill_process on a foreground shell loop ends it and leaves the session idle', async () => {
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { name: 'loop' });
    try {
      const r = await h.exec('while true; do echo tick; sleep 0.2; done', {
        session_id,
        pause_timeout: 5,
        total_timeout: 1,
      });
      expect(r.status).toBe('partial');
      const kill = await h.ok<{ result: string }>('kill_process', { command_id: r.command_id, grace_s: 1 });
      expect(kill.result).toBe('killed');
      const sessions = await h.ok<{ sessions: { session_id: string; state: string }[] }>('list_sessions');
      expect(sessions.sessions.find((s) => s.session_id === session_id)?.state).toBe('idle');
      const next = await h.exec('cd /tmp && echo here', { session_id });
      expect(next.output).toBe('here');
      expect(next.isolated).toBeUndefined();
      expect(next.cwd).toBe('/tmp');
    } finally {
      await h.ok('close_session', { session_id });
    }
  });

  test('close_session kills what the session started', async () => {
    const tag = randomBytes(6).toString('hex');
    const { session_id } = await h.ok<{ session_id: string }>('create_local', {
      env: { CONCH_TEST_TAG: tag },
    });
    await h.exec('sleep 303', { session_id, background: true });
    const fg = await h.exec('sleep 304', { session_id, pause_timeout: 0.3 });
    expect(fg.status).toBe('partial');
    await waitFor(() => pidsWithEnv('CONCH_TEST_TAG', tag).length >= 3, { what: 'shell and both sleeps' });
    const closed = await h.ok<{ killed_command_ids: string[] }>('close_session', { session_id });
    expect(closed.killed_command_ids).toContain(fg.command_id);
    expect(closed.killed_command_ids).toHaveLength(2);
    await waitFor(() => pidsWithEnv('CONCH_TEST_TAG', tag).length === 0, {
      what: 'no process of the session left',
    });
    const gone = await h.call('execute', { command: 'echo x', session_id });
    expect(gone.error?.code).toBe('SESSION_NOT_FOUND');
  });
});

describe('server shutdown kills everything it started', () => {
  async function startWithWork(): Promise<{ h: ServerHandle; tag: string; pids: number[] }> {
    const h = await startServer();
    const tag = randomBytes(6).toString('hex');
    const { session_id } = await h.ok<{ session_id: string }>('create_local', {
      env: { CONCH_TEST_TAG: tag },
    });
    await h.exec('sleep 305', { session_id, background: true });
    await h.exec('(setsid sleep 306 >/dev/null 2>&1 &); sleep 307', { session_id, background: true });
    const fg = await h.exec('sleep 308', { session_id, pause_timeout: 0.3 });
    expect(fg.status).toBe('partial');
    // Default session too.
    await h.exec('sleep 309', { background: true });
    const pids = await waitFor(
      () => {
        const p = pidsWithEnv('CONCH_TEST_TAG', tag);
        return p.length >= 6 ? p : undefined;
      },
      { what: 'all processes to start' },
    );
    return { h, tag, pids: [...pids, ...descendants(h.pid)] };
  }

  test('closing the client stdin makes the server exit 0 within 5 s and leaves no process behind', async () => {
    const { h, tag, pids } = await startWithWork();
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      h.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    h.child.stdin?.end();
    const { code, signal } = await exit;
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(h.stderr()).toMatch(/shutting down why="stdin EOF"/);
    // Shutdown finished within its deadline (5 s): it stopped, it was not cut short by the deadline.
    await waitFor(() => / INFO stopped/.test(h.stderr()), { what: 'the "stopped" log line' });
    expect(h.stderr()).not.toMatch(/shutdown did not finish in time/);
    await waitFor(() => pidsWithEnv('CONCH_TEST_TAG', tag).length === 0, {
      timeoutMs: 3000,
      what: 'tagged processes gone',
    });
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    await h.close();
  });

  test('SIGTERM makes the server exit 0 and leaves no process behind', async () => {
    const { h, tag, pids } = await startWithWork();
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      h.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    process.kill(h.pid, 'SIGTERM');
    const { code } = await exit;
    expect(code).toBe(0);
    // Shutdown finished within its deadline (5 s): it stopped, it was not cut short by the deadline.
    await waitFor(() => / INFO stopped/.test(h.stderr()), { what: 'the "stopped" log line' });
    expect(h.stderr()).not.toMatch(/shutdown did not finish in time/);
    await waitFor(() => pidsWithEnv('CONCH_TEST_TAG', tag).length === 0, {
      timeoutMs: 3000,
      what: 'tagged processes gone',
    });
    for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
    await h.close();
  });
});

describe('two servers on one machine', () => {
  test("closing one server's default session does not touch the other's", async () => {
    const a = await startServer();
    const b = await startServer();
    try {
      await a.exec('echo a');
      const bSession = (await b.ok<{ sessions: { session_id: string; pid?: number }[] }>('list_sessions'))
        .sessions;
      expect(bSession).toEqual([]);
      await b.exec('echo b');
      const shellB = (await b.ok<{ sessions: { session_id: string; pid?: number }[] }>('list_sessions'))
        .sessions[0]?.pid;
      expect(shellB).toBeGreaterThan(0);
      const bg = await b.exec('sleep 310', { background: true });
      await a.ok('close_session', { session_id: 'default' });
      expect(isAlive(shellB!)).toBe(true);
      const listed = await b.ok<{ processes: ProcessRow[] }>('list_processes', { include_finished: false });
      expect(listed.processes.map((p) => p.command_id)).toContain(bg.command_id);
      const still = await b.exec('echo b-still-here');
      expect(still.output).toBe('b-still-here');
      expect(still.isolated).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('a client that dies', () => {
  test('the server exits and leaves no process behind when its client is SIGKILLed (stdin, stdout, stderr all close)', async () => {
    const { spawn } = await import('node:child_process');
    const { join } = await import('node:path');
    const { BIN } = await import('./harness.js');
    const client = spawn(
      process.execPath,
      [join(import.meta.dirname, 'fixtures', 'client-that-dies.mjs'), BIN],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve) =>
      client.stdout.once('data', (d) => resolve(String(d))),
    );
    const { serverPid } = JSON.parse(line) as { serverPid: number };
    const shells = descendants(serverPid);
    expect(shells.length).toBeGreaterThan(0);
    client.kill('SIGKILL');
    try {
      await waitFor(() => !isAlive(serverPid), { timeoutMs: 8000, what: 'server exited' });
      await waitFor(() => shells.every((pid) => !isAlive(pid)), {
        timeoutMs: 3000,
        what: 'its processes gone',
      });
    } finally {
      // On failure, leave nothing running behind the test.
      for (const pid of [serverPid, ...shells]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone, as it should be
        }
      }
    }
  });
});
