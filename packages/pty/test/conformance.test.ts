import { describeDriverConformance } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { countWithCommandId } from '@conch/node/testing';
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
  countWithCommandId: async (id) => countWithCommandId(id),
});
