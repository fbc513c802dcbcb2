/**
 * Test helpers shipped with the core (`@conch/core/testing`): a fake clock, a fake driver that speaks
 * the shell-integration protocol, and the driver conformance suite the real drivers run.
 */
export { FakeClock, flushMicrotasks } from './fake-clock.js';
export { FakeDriver, decodeAnsiC, type FakeCommand, type FakeCommandContext, type FakeDriverOptions } from './fake-driver.js';
export { describeDriverConformance, type ConformanceSetup } from './conformance.js';
export { MemorySpillStore } from '../output/memory-spill.js';
