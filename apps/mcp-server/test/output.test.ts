import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type CommandResult,
  procStatusKb,
  readUntilCompleted,
  type ServerHandle,
  startServer,
} from './harness.js';

describe('output floods stay bounded (real PTY, built server over stdio)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('yes | head -c 200000000 completes with truncated output, an omission notice, and bounded memory', async () => {
    const before = procStatusKb(h.pid, 'VmHWM') ?? 0;
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { name: 'flood' });
    const started = Date.now();
    // total_timeout returns each call while the flood streams; keep reading until it completes.
    const first = await h.exec('yes | head -c 200000000', {
      session_id,
      pause_timeout: 60,
      total_timeout: 20,
    });
    const results = await readUntilCompleted(h, first, { pause_timeout: 60, total_timeout: 20 }, 200);
    const done = results.at(-1)!;
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(0);
    // 200 000 000 bytes of "y\n" = 100 000 000 lines.
    const last = await h.ok<CommandResult>('read_output', { command_id: first.command_id, offset: -1 });
    expect(last.page?.total_lines).toBeGreaterThanOrEqual(100_000_000);
    expect(results.some((r) => r.output_info?.truncated)).toBe(true);
    const text = results.map((r) => r.output).join('\n');
    expect(text).toMatch(/omitted/);
    for (const r of results) expect(r.output.length).toBeLessThanOrEqual(31_000);
    const hwmKb = procStatusKb(h.pid, 'VmHWM') ?? 0;
    console.log(
      `yes | head -c 200000000: ${Math.round((Date.now() - started) / 1000)} s, ${results.length} calls; ` +
        `server VmHWM before ${Math.round(before / 1024)} MiB, after ${Math.round(hwmKb / 1024)} MiB`,
    );
    expect(hwmKb).toBeLessThan(300 * 1024);
    // The server still answers other calls.
    expect((await h.exec('echo alive', { session_id })).output).toBe('alive');
    await h.ok('close_session', { session_id });
  }, 900_000);
});

describe('lean text results (built server over stdio)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a 3000-line failing command: a client keeping the first 2000 lines or 51,200 bytes still sees the exit code, the FAILED line and the id', async () => {
    const call = await h.call<CommandResult>('execute', {
      command:
        'for i in $(seq 1 3000); do echo "test_$i ok"; if [ $i = 1500 ]; then echo "FAILED tests/test_x.py::test_y - AssertionError"; fi; done; false',
    });
    const r = call.structured;
    expect(r.status).toBe('completed');
    expect(r.exit_code).toBe(1);
    // The output was cut (3001 lines > the 1000-line cap), so output_info is there.
    expect(r.output_info).toMatchObject({ truncated: true, lines_total: 3001, omitted_lines: 2003 });
    const lines = call.text.split('\n');
    // Status line first, with the id (paging is possible); then 200 head lines, the notice, the rescue, the tail.
    expect(lines[0]).toMatch(new RegExp(`^\\[exit 1 · [\\d.]+ m?s · command_id=${r.command_id}\\]$`));
    expect(lines[1]).toBe('test_1 ok');
    expect(lines[201]).toMatch(
      /^\[… 2003 lines omitted \(lines 200-2202\) of 3001 lines; 1 error line kept; read_output offset=200 to page through them(; full log: \S+)?\]$/,
    );
    expect(lines.slice(202, 204)).toEqual([
      '1499: test_1500 ok',
      '1500: FAILED tests/test_x.py::test_y - AssertionError',
    ]);
    expect(lines.at(-1)).toBe('test_3000 ok');
    expect(lines).toHaveLength(1002);
    // What OpenCode keeps of a tool result: the first 2000 lines, then at most 51,200 bytes.
    const kept = Buffer.from(lines.slice(0, 2000).join('\n'), 'utf8').subarray(0, 51_200).toString('utf8');
    expect(kept.startsWith('[exit 1 · ')).toBe(true);
    expect(kept).toContain('FAILED tests/test_x.py::test_y');
    expect(kept).toContain(`command_id=${r.command_id}`);
    // The id pages through what was omitted.
    const page = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      offset: 200,
      length: 2,
    });
    expect(page.output).toBe('[lines 200-201 of 3001, 2799 remaining]\ntest_201 ok\ntest_202 ok');
  });

  test('a prompt and a background command read as one line saying what runs and the one call to make next', async () => {
    const { session_id } = await h.ok<{ session_id: string }>('create_local', { name: 'lean' });
    try {
      const pw = await h.call<CommandResult>('execute', {
        command: 'read -s -p "Password: " pw; echo got-it',
        session_id,
      });
      const id = pw.structured.command_id;
      expect(pw.structured.reason).toBe('awaiting_input');
      expect(pw.text).toBe(
        `[waiting at a password prompt · next: respond command_id=${id} secret=true]\nPassword: `,
      );
      const answered = await h.call<CommandResult>('respond', { command_id: id, text: 'x', secret: true });
      expect(answered.text).toMatch(/^\[exit 0 · \d+ ms\]\n(\n)?got-it$/);
      const bg = await h.call<CommandResult>('execute', {
        command: 'sleep 30',
        background: true,
        session_id,
      });
      const bgId = bg.structured.command_id;
      expect(bg.text).toBe(`[running in the background · next: read_output command_id=${bgId}]`);
      expect(bg.structured.isolated).toBe(true);
      await h.ok('kill_process', { command_id: bgId, grace_s: 0 });
    } finally {
      await h.ok('close_session', { session_id });
    }
  });
});

describe('progress and cancellation', () => {
  let h: ServerHandle;
  let session_id: string;
  beforeAll(async () => {
    h = await startServer();
    session_id = (await h.ok<{ session_id: string }>('create_local', { name: 'progress' })).session_id;
  });
  afterAll(async () => {
    await h?.close();
  });

  test('progress notifications arrive while waiting, with the newest output line', async () => {
    const progress: { progress: number; message?: string }[] = [];
    const r = await h.ok<CommandResult>(
      'execute',
      { command: 'for i in 1 2 3 4 5; do echo "tick $i"; sleep 1; done', pause_timeout: 10, session_id },
      { onProgress: (p) => progress.push(p) },
    );
    expect(r.status).toBe('completed');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    expect(progress.some((p) => /tick \d/.test(p.message ?? ''))).toBe(true);
  });

  test('cancelling a call stops the wait, not the command', async () => {
    const controller = new AbortController();
    let firstProgress: () => void = () => {};
    const progressed = new Promise<void>((resolve) => {
      firstProgress = resolve;
    });
    const call = h.call(
      'execute',
      { command: 'sleep 3; echo finished-anyway', pause_timeout: 60, session_id },
      { signal: controller.signal, onProgress: () => firstProgress() },
    );
    await progressed;
    controller.abort();
    await expect(call).rejects.toThrow();
    const listed = await h.ok<{ processes: { command_id: string; command: string; state: string }[] }>(
      'list_processes',
      {
        filter: 'finished-anyway',
      },
    );
    const row = listed.processes[0];
    expect(row?.state).toBe('running');
    const done = await h.ok<CommandResult>('read_output', { command_id: row!.command_id, pause_timeout: 30 });
    expect(done.status).toBe('completed');
    expect(done.output).toContain('finished-anyway');
  });
});
