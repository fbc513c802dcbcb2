/**
 * The input-wait evidence of a local terminal is never older than its output: when the server was too busy
 * to read the terminal (a loaded machine), the shell may already have printed its prompt and gone back to
 * reading its terminal. A probe made then sees "blocked reading the terminal"; the output that explains it
 * (the end-of-command marker) must reach the listeners before the evidence does, or a finished `true`
 * is reported as waiting for input.
 */
import { readFileSync } from 'node:fs';
import { waitFor } from '@conch/core/testing';
import { isAlive } from '@conch/node/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver;

beforeAll(() => {
  driver = createLocalDriver();
});

afterAll(async () => {
  await driver.dispose();
});

/** Voluntary context switches of `pid` (it went to sleep that many times), from /proc. */
function sleeps(pid: number): number {
  const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

test('output written before the shell went back to reading reaches the listeners before its input-wait evidence', async () => {
  const proc = await driver.spawn({
    file: '/bin/bash',
    args: ['--norc', '--noprofile', '--noediting', '-i'],
    cwd: '/tmp',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PS1: '', TERM: 'dumb' },
    cols: 80,
    rows: 24,
  });
  const pid = proc.pid as number;
  let seen = '';
  proc.onData((chunk) => {
    seen += Buffer.from(chunk).toString('utf8');
  });
  try {
    // Idle at its (empty) prompt: the shell reads its terminal.
    await proc.write('printf "rea""dy\\n"\n', 1000);
    await waitFor(() => seen.includes('ready'), { what: 'the first line' });
    expect(seen).toContain('ready');
    await waitFor(async () => (await proc.inputWaitEvidence?.()) === 'blocked_read', {
      what: 'the shell to read again',
    });
    const before = sleeps(pid);
    // The server is busy (this loop holds the event loop) while the shell runs the line, prints, and
    // sleeps in its read again: the printed bytes wait unread in the terminal.
    void proc.write('printf "do""ne\\n"\n', 1000);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8');
      if (sleeps(pid) > before && /n_tty_read|wait_woken/.test(wchan)) break;
    }
    const evidence = await proc.inputWaitEvidence?.();
    expect(evidence).toBe('blocked_read');
    expect(seen).toContain('done');
  } finally {
    proc.dispose();
    await waitFor(() => !isAlive(pid), { what: 'the shell to be gone' }).catch(() => undefined);
    expect(isAlive(pid)).toBe(false);
  }
});
