/**
 * `CONCH_PHASE_TRACE=FILE`: conch-mcp stamps each phase of every tool call (see `CALL_PHASES` in
 * `@conch/core`) on the wall clock (ms since the epoch, sub-millisecond) and writes them to FILE when it
 * exits, as `{"phases": [...], "marks": [[phase index, time], ...]}`. The benchmark uses it to split the
 * round trip of `execute true` into the client's hops and the server's phases. Marks are kept in memory
 * (at most {@link MAX_PHASE_MARKS}); nothing is traced when the variable is unset.
 */

import { writeFileSync } from 'node:fs';
import { CALL_PHASES, type CallPhase, setPhaseTracer } from '@conch/core';

/** Most marks kept (later ones are dropped). */
export const MAX_PHASE_MARKS = 1_000_000;

/** Installs the phase tracer and writes the marks to `file` when the process exits. */
export function tracePhasesToFile(file: string): void {
  const index = new Map<CallPhase, number>(CALL_PHASES.map((phase, i) => [phase, i]));
  const marks: Array<[number, number]> = [];
  const origin = performance.timeOrigin;
  setPhaseTracer((phase) => {
    if (marks.length < MAX_PHASE_MARKS) marks.push([index.get(phase) ?? -1, origin + performance.now()]);
  });
  process.on('exit', () => {
    try {
      writeFileSync(file, JSON.stringify({ phases: CALL_PHASES, marks }));
    } catch {
      // A diagnostics file that cannot be written is not worth failing the exit for.
    }
  });
}
