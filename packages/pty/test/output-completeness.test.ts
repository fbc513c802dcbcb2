/**
 * Reliability: the output-completeness suite on local terminals (background, isolated and foreground
 * commands, and a command that ends the shell, 50 runs each); the lost bytes go to
 * `.reliability/output-completeness-local.json`.
 */
import { describeOutputCompleteness } from '@conch/core/testing';
import { withNodeHost, writeReliabilityReport } from '@conch/node/testing';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver | undefined;

describeOutputCompleteness(
  'local (node-pty)',
  withNodeHost({
    kind: 'local',
    runs: 50,
    driver: async () => {
      driver = createLocalDriver();
      return driver;
    },
    teardown: async () => {
      await driver?.dispose();
    },
    report: (bytesLost: number) => writeReliabilityReport('output-completeness-local', { bytesLost }),
  }),
);
