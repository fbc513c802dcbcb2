import { describeDriverConformance } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore, processFacts } from '@conch/node';
import { countMarked } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { expect, it } from 'vitest';
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

it('reads process facts the way CONCH_PROCESS_FACTS says (ps when forced, else /proc here)', () => {
  expect(processFacts().kind).toBe(process.env.CONCH_PROCESS_FACTS === 'ps' ? 'ps' : 'proc');
});
