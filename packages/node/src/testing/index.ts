/**
 * `@conch/node/testing`: helpers for conch's tests on Linux — the engine as the tests of the real drivers
 * run it, the local `/proc` process table (processes tagged by environment, trees, open fds) and the
 * reliability suite's report files.
 */

export { createTestManager, type NodeHost, type TestManager, withNodeHost } from './engine.js';
export {
  countWithCommandId,
  descendants,
  isAlive,
  openFds,
  type ProcessStat,
  pidsWithEnv,
  processCmdline,
  processEnv,
  processEnvValue,
  processStat,
  processTable,
  processTree,
  procStatusKb,
} from './proc.js';
export { RELIABILITY_DIR, type ReliabilityCounts, writeReliabilityReport } from './reliability.js';
