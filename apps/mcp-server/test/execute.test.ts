import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, readUntilCompleted, type ServerHandle, startServer } from './harness.js';

describe('execute in persistent sessions (real PTY, built server over stdio)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('echo hi completes with exit code 0, its output, and a status line in the text block', async () => {
    // A pause_timeout so long that only the command's end can end the call before the test times out.
    const call = await h.call<CommandResult>('execute', { command: 'echo hi', pause_timeout: 600 });
    expect(call.isError).toBe(false);
    const r = call.structured;
    expect(r.status).toBe('completed');
    expect(r.reason).toBe('exited');
    expect(r.state).toBe('exited');
    expect(r.exit_code).toBe(0);
    expect(r.output).toBe('hi');
    expect(r.session_id).toBe('default');
    expect(r.command_id).toMatch(/^c_[a-z2-7]{10}$/);
    expect(call.raw.content).toHaveLength(1);
    // The status line first, then the output; nothing in the status line that carries nothing.
    expect(call.text).toMatch(/^\[exit 0 · \d+ ms\]\nhi$/);
    expect(r).not.toHaveProperty('signal');
    expect(r).not.toHaveProperty('isolated');
    expect(r).not.toHaveProperty('output_info');
  });

  test('a cd reads as one short line naming the new cwd; a command that leaves it reads as the exit alone', async () => {
    const cd = await h.call<CommandResult>('execute', { command: 'cd /usr' });
    expect(cd.structured.cwd).toBe('/usr');
    expect(cd.structured.cwd_changed).toBe(true);
    expect(cd.text).toMatch(/^\[exit 0 · \d+ ms · cwd \/usr\]$/);
    const same = await h.call<CommandResult>('execute', { command: 'cd /usr' });
    expect(same.structured.cwd).toBe('/usr');
    expect(same.structured).not.toHaveProperty('cwd_changed');
    expect(same.text).toMatch(/^\[exit 0 · \d+ ms\]$/);
    const failing = await h.call<CommandResult>('execute', { command: 'ls /surely-not-here-conch' });
    expect(failing.structured.exit_code).toBe(2);
    expect(failing.text).toMatch(
      /^\[exit 2 · \d+ ms\]\nls: cannot access '\/surely-not-here-conch': No such file or directory$/,
    );
  });

  test('at the default log level a successful call writes no log line (each one is a write the client reads)', async () => {
    // stderr and stdout are separate pipes: wait for a line on stderr after each call (the debug server's
    // proves such a line arrives), so that an absent line is not just a late one.
    const debug = await startServer({ args: ['--log-level', 'debug'] });
    try {
      const before = h.stderr().length;
      expect((await h.exec('true')).exit_code).toBe(0);
      expect((await debug.exec('true')).exit_code).toBe(0);
      await waitFor(() => /DEBUG tool done tool=execute/.test(debug.stderr()), {
        timeoutMs: 10_000,
        what: "the debug server's log line",
      }).catch(() => undefined);
      expect(debug.stderr()).toMatch(/DEBUG tool done tool=execute .*status=completed/);
      // The default server wrote its line (if any) before its answer, as the debug one did.
      expect((await h.exec('true')).exit_code).toBe(0);
      expect(h.stderr().slice(before)).toBe('');
    } finally {
      await debug.close();
    }
  });

  test('cd persists between calls', async () => {
    const cd = await h.exec('cd /tmp');
    expect(cd.status).toBe('completed');
    expect(cd.cwd).toBe('/tmp');
    const pwd = await h.exec('pwd');
    expect(pwd.output).toBe('/tmp');
    expect(pwd.cwd).toBe('/tmp');
    const sessions = await h.ok<{ sessions: { session_id: string; cwd: string | null }[] }>('list_sessions');
    expect(sessions.sessions.find((s) => s.session_id === 'default')?.cwd).toBe('/tmp');
  });

  test('export persists between calls', async () => {
    await h.exec('export CONCH_TEST_FOO="bar 42"');
    const r = await h.exec('echo "[$CONCH_TEST_FOO]"');
    expect(r.output).toBe('[bar 42]');
  });

  test('exit codes are exact', async () => {
    expect((await h.exec('false')).exit_code).toBe(1);
    expect((await h.exec('(exit 3)')).exit_code).toBe(3);
    expect((await h.exec('true')).exit_code).toBe(0);
  });

  test('a heredoc runs as typed', async () => {
    const r = await h.exec("cat <<'EOF'\nline one\n$HOME stays literal\nEOF");
    expect(r.status).toBe('completed');
    expect(r.exit_code).toBe(0);
    expect(r.output).toBe('line one\n$HOME stays literal');
  });

  test('a syntax error completes non-zero and the next command works', async () => {
    const bad = await h.exec('echo "unterminated');
    expect(bad.status).toBe('completed');
    expect(bad.exit_code).not.toBe(0);
    expect(bad.exit_code).not.toBeNull();
    const bad2 = await h.exec('if then fi');
    expect(bad2.status).toBe('completed');
    expect(bad2.exit_code).not.toBe(0);
    const next = await h.exec('echo still alive');
    expect(next.output).toBe('still alive');
    expect(next.exit_code).toBe(0);
  });

  test('a set -u session reports the error and keeps working', async () => {
    const session = await h.ok<{ session_id: string }>('create_local', { name: 'strict' });
    const sid = session.session_id;
    expect(sid).toMatch(/^s_/);
    try {
      await h.exec('set -u', { session_id: sid });
      const r = await h.exec('echo "$CONCH_SURELY_UNDEFINED_VAR"', { session_id: sid });
      expect(r.status).toBe('completed');
      expect(r.exit_code).not.toBe(0);
      expect(r.output).toMatch(/unbound variable/);
      const next = await h.exec('echo ok', { session_id: sid });
      expect(next.output).toBe('ok');
      expect(next.exit_code).toBe(0);
    } finally {
      const closed = await h.ok<{ closed: boolean }>('close_session', { session_id: sid });
      expect(closed.closed).toBe(true);
    }
  });

  test('a silent sleep returns partial by pause_timeout, then kill_process stops it', async () => {
    const started = Date.now();
    const r = await h.exec('sleep 30', { pause_timeout: 1 });
    const elapsed = Date.now() - started;
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('silence');
    expect(r.state).toBe('running');
    expect(elapsed).toBeGreaterThanOrEqual(900);
    // The pause given ended the call (not total_timeout, not the command's end).
    expect(r.pause_timeout).toBe(1);
    const call = await h.call<CommandResult>('read_output', { command_id: r.command_id, pause_timeout: 0 });
    // One line: what is running and the one call to make next.
    expect(call.text).toMatch(
      new RegExp(`^\\[running [\\d.]+ s · next: read_output command_id=${r.command_id}\\]$`),
    );
    expect(r.output).toBe('');
    const kill = await h.ok<{ result: string; survivors: number[] }>('kill_process', {
      command_id: r.command_id,
    });
    expect(kill.result).toBe('killed');
    expect(kill.survivors).toEqual([]);
    const after = await h.ok<CommandResult>('read_output', { command_id: r.command_id, pause_timeout: 0 });
    expect(after.status).toBe('completed');
    // The session shell is still usable.
    expect((await h.exec('echo after kill')).output).toBe('after kill');
  });

  test('a streaming loop returns by total_timeout, not by pause_timeout', async () => {
    // Its own session: killing a foreground shell loop is covered by the processes tests.
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { name: 'stream' });
    try {
      const started = Date.now();
      const r = await h.exec('for i in $(seq 1 100000); do echo "line $i"; sleep 0.05; done', {
        session_id,
        pause_timeout: 10,
        total_timeout: 2,
      });
      const elapsed = Date.now() - started;
      expect(r.status).toBe('partial');
      expect(r.reason).toBe('total_timeout');
      expect(r.output).toMatch(/^line 1$/m);
      expect(elapsed).toBeGreaterThanOrEqual(1900);
      const more = await h.ok<CommandResult>('read_output', {
        command_id: r.command_id,
        pause_timeout: 5,
        total_timeout: 1,
      });
      expect(more.reason).toBe('total_timeout');
      // New output continues exactly where the last call stopped.
      const lastBefore = Number(/line (\d+)\s*$/.exec(r.output)?.[1]);
      const firstAfter = Number(/^line (\d+)/.exec(more.output)?.[1]);
      expect(firstAfter).toBe(lastBefore + 1);
      const stopped = await h.ok<CommandResult>('send_control', { command_id: r.command_id, key: 'ctrl+c' });
      expect(stopped.status).toBe('completed');
    } finally {
      await h.ok('close_session', { session_id });
    }
  });

  test('two concurrent executes on the default session both complete, one isolated', async () => {
    await h.exec('cd /tmp');
    const [a, b] = await Promise.all([
      h.exec('sleep 1; echo first-done; pwd'),
      h.exec('sleep 1; echo second-done; pwd'),
    ]);
    const results = [a, b];
    for (const r of results) {
      expect(r.status).toBe('completed');
      expect(r.exit_code).toBe(0);
    }
    // Both ran in the session's cwd (the isolated one starts from it).
    expect(a.output).toBe('first-done\n/tmp');
    expect(b.output).toBe('second-done\n/tmp');
    expect(results.filter((r) => r.isolated === true)).toHaveLength(1);
  });

  test('a paged read of a completed command reaches every line exactly', async () => {
    const r = await h.exec('seq 1 200000', { pause_timeout: 30, total_timeout: 120 });
    const done = (await readUntilCompleted(h, r, { pause_timeout: 30, total_timeout: 120 })).at(-1)!;
    expect(done.exit_code).toBe(0);
    const lines: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await h.ok<CommandResult>('read_output', {
        command_id: r.command_id,
        offset,
        length: 20000,
        max_output_chars: 200000,
      });
      expect(page.page).toBeDefined();
      expect(page.page!.total_lines).toBeGreaterThanOrEqual(200000);
      expect(page.page!.from_line).toBe(offset);
      expect(page.page!.dropped_lines).toBe(0);
      const [header, ...body] = page.output.split('\n');
      expect(header).toMatch(/^\[lines \d+-\d+ of \d+/);
      // to_line is inclusive.
      expect(body).toHaveLength(page.page!.to_line - page.page!.from_line + 1);
      lines.push(...body);
      offset = page.page!.to_line + 1;
      if (page.page!.remaining_lines === 0) break;
    }
    const expected = Array.from({ length: 200000 }, (_, i) => String(i + 1));
    expect(lines.filter((l) => l !== '')).toEqual(expected);
    // Negative offset: the last lines.
    const tail = await h.ok<CommandResult>('read_output', { command_id: r.command_id, offset: -3 });
    expect(tail.output.split('\n').slice(1).filter(Boolean)).toEqual(['199998', '199999', '200000']);
    // filter keeps matching lines with their line numbers.
    const filtered = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      filter: '^19999[0-9]$',
    });
    expect(filtered.output).toContain('199990');
    expect(filtered.output).toContain('199999');
  });
});
