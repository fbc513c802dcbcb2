import { describe, expect, it } from 'vitest';
import type { EscapedProcess, EscapedScan } from '../driver.js';
import { FakeClock } from '../testing/fake-clock.js';
import { ESCAPED_RESCAN_MS, ESCAPED_SETTLE_MS, settledEscapedProcesses } from './escaped-processes.js';

/** Escaped processes by command id as `[pid, state]`; `forks` are the terminal's own forks. */
type Scan = Record<string, [number, string][]> & { forks?: [number, string][] };

const processes = (list: [number, string][]): EscapedProcess[] =>
  list.map(([pid, state]) => ({ pid, state }));

/** Runs settledEscapedProcesses over `scans` (the last one repeats) on a fake clock. */
async function settle(scans: Scan[]) {
  const clock = new FakeClock();
  const times: number[] = [];
  let i = 0;
  const scan = async (): Promise<EscapedScan> => {
    times.push(clock.now());
    const { forks = [], ...found } = scans[Math.min(i++, scans.length - 1)]!;
    const escaped = new Map(Object.entries(found).map(([id, list]) => [id, processes(list)] as const));
    return { escaped, forks: processes(forks) };
  };
  let result: Map<string, number[]> | undefined;
  const done = settledEscapedProcesses(scan, clock).then((r) => {
    result = r;
  });
  while (result === undefined) await clock.advance(ESCAPED_RESCAN_MS);
  await done;
  return { result: Object.fromEntries(result), scans: times.length, at: clock.now() };
}

describe('settledEscapedProcesses', () => {
  it('a daemon caught between its parent and itself (missed by the first scan) is listed', async () => {
    const { result, scans } = await settle([{}, { c1: [[42, 'S']] }, { c1: [[42, 'S']] }]);
    expect(result).toEqual({ c1: [42] });
    expect(scans).toBe(3);
  });

  it('a fork that is about to exit (running) is not listed once it has gone', async () => {
    const { result } = await settle([
      { c1: [[40, 'R']] },
      {
        c1: [
          [40, 'R'],
          [42, 'S'],
        ],
      },
      {
        c1: [
          [40, 'R'],
          [42, 'S'],
        ],
      },
      { c1: [[42, 'D']] },
      { c1: [[42, 'S']] },
      { c1: [[42, 'S']] },
    ]);
    expect(result).toEqual({ c1: [42] });
  });

  it('two steady scans answer: several commands, pids ascending; nothing left is an empty answer', async () => {
    const both = {
      c1: [
        [51, 'S'],
        [50, 'T'],
      ],
      c2: [[60, 'S']],
    } satisfies Scan;
    expect((await settle([both])).result).toEqual({ c1: [50, 51], c2: [60] });
    const none = await settle([{}]);
    expect(none.result).toEqual({});
    expect(none.scans).toBe(2);
  });

  it('waits while the session shell has a fork running (a job not yet executing its program)', async () => {
    // The job's first process is a fork of the shell: no command id in /proc until it executes `setsid`.
    const { result, scans } = await settle([
      { forks: [[80, 'R']] },
      { forks: [[80, 'R']] },
      { forks: [[80, 'R']] },
      { c1: [[81, 'R']] },
      { c1: [[82, 'S']] },
      { c1: [[82, 'S']], forks: [[90, 'S']] },
    ]);
    expect(result).toEqual({ c1: [82] });
    expect(scans).toBe(6);
  });

  it('a leftover that never stops running is listed after the settle time', async () => {
    const { result, at } = await settle([{ c1: [[70, 'R']] }]);
    expect(result).toEqual({ c1: [70] });
    expect(at).toBeGreaterThanOrEqual(ESCAPED_SETTLE_MS);
    expect(at).toBeLessThan(ESCAPED_SETTLE_MS + 2 * ESCAPED_RESCAN_MS);
  });
});
