import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { startServer } from './harness.js';

/** The server's phases of one call, in the order they happen (CALL_PHASES of @conch/core). */
const PHASES = ['received', 'handler', 'typed', 'shell_done', 'rendered', 'replying'];

describe('CONCH_PHASE_TRACE: the phases of each call, for the benchmark', () => {
  const dir = mkdtempSync(join(tmpdir(), 'conch-phase-trace-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('each execute call is stamped received → handler → typed → shell_done → rendered → replying, on the wall clock, and the file is written at exit', async () => {
    const file = join(dir, 'phases.json');
    const h = await startServer({ env: { CONCH_PHASE_TRACE: file } });
    const before = performance.timeOrigin + performance.now();
    await h.exec('true');
    await h.exec('echo two');
    const after = performance.timeOrigin + performance.now();
    await h.close();
    await waitFor(() => existsSync(file), { what: 'the trace file written at exit' });
    const trace = JSON.parse(readFileSync(file, 'utf8')) as {
      phases: string[];
      marks: Array<[number, number]>;
    };
    expect(trace.phases).toEqual(PHASES);
    const named = trace.marks.map(([i, at]) => [trace.phases[i], at] as const);
    // Requests without a command (initialize, tools/list) are received and answered only.
    const calls = named.filter(([phase]) => phase === 'typed');
    expect(calls).toHaveLength(2);
    // The two execute calls, in full and in order, each between the client's send and its receipt.
    const ofCalls = named.filter(([, at]) => at >= before && at <= after);
    expect(ofCalls.map(([phase]) => phase)).toEqual([...PHASES, ...PHASES]);
    for (let i = 1; i < ofCalls.length; i++)
      expect(ofCalls[i]?.[1]).toBeGreaterThanOrEqual(ofCalls[i - 1]?.[1] ?? 0);
  });
});
