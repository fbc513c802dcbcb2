/**
 * Reliability: the output-completeness suite on local terminals (background, isolated and foreground
 * commands, and a command that ends the shell, 50 runs each); the lost bytes go to
 * `.reliability/output-completeness-local.json`.
 */
import { describeOutputCompleteness } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { writeReliabilityReport } from '@conch/node/testing';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver | undefined;
let spill: FileSpillStore | undefined;

describeOutputCompleteness('local (node-pty)', {
  kind: 'local',
  runs: 50,
  driver: async () => {
    driver = createLocalDriver();
    return driver;
  },
  teardown: async () => {
    await driver?.dispose();
    spill?.dispose(true);
  },
  spill: () => {
    spill = new FileSpillStore({});
    return spill;
  },
  screen: createXtermScreen,
  report: (bytesLost) => writeReliabilityReport('output-completeness-local', { bytesLost }),
});
