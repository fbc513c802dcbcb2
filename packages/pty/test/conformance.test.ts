import { describeDriverConformance } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { countMarked } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver | undefined;
let spill: FileSpillStore | undefined;

describeDriverConformance('local (node-pty)', {
  kind: 'local',
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
  countMarked: async (id) => countMarked(id),
  denyRm: () => new Policy(policyConfigFromFlags({ deny: ['rm'] })),
});
