import { afterEach, describe, expect, test } from 'vitest';
import { CALL_PHASES, type CallPhase, markPhase, setPhaseTracer } from './phase-trace.js';

describe('phase trace', () => {
  afterEach(() => setPhaseTracer(undefined));

  test('marks reach the installed tracer in order, and nothing reaches a removed one', () => {
    const seen: CallPhase[] = [];
    setPhaseTracer((phase) => seen.push(phase));
    for (const phase of CALL_PHASES) markPhase(phase);
    expect(seen).toEqual([...CALL_PHASES]);
    setPhaseTracer(undefined);
    markPhase('typed');
    expect(seen).toHaveLength(CALL_PHASES.length);
  });
});
