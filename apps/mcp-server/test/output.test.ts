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
    expect(done.output_info.lines_total).toBeGreaterThanOrEqual(100_000_000);
    expect(results.some((r) => r.output_info.truncated)).toBe(true);
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
