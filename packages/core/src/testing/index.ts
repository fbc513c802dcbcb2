/**
 * Test helpers shipped with the core (`@conch/core/testing`): a fake clock, a fake driver that speaks
 * the shell-integration protocol, a session manager over both, the driver conformance suite the real
 * drivers run, the checks of other shells the session tests share, and the one helper that waits for a condition in tests of real processes.
 */

export { MemorySpillStore } from '../output/memory-spill.js';
export { type CompletenessSetup, describeOutputCompleteness } from './completeness.js';
export { type ConformanceSetup, describeDriverConformance, REQUIRED_CAPABILITIES } from './conformance.js';
export { FakeClock, flushMicrotasks } from './fake-clock.js';
export {
  decodeAnsiC,
  type FakeCommand,
  type FakeCommandContext,
  FakeDriver,
  type FakeDriverOptions,
} from './fake-driver.js';
export { createFakeEngine, type FakeEngine, settled } from './fake-engine.js';
export { readToEnd } from './read-to-end.js';
export {
  expectHostileBashrcSurvived,
  expectPosixShWorks,
  expectZshWorks,
  HOSTILE_BASHRC,
  type RunInSession,
} from './shells.js';
export { type WaitForOptions, waitFor } from './wait-for.js';
