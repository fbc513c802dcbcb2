/**
 * The core's driver conformance suite against sandboxed local sessions (real bubblewrap). The sandbox has
 * the default rules plus a writable home (vim writes ~/.viminfo; the secret stores stay hidden).
 */
import { homedir } from 'node:os';
import { resolveSandboxRules } from '@conch/core';
import { describeDriverConformance } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { countMarked } from '@conch/node/testing';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver | undefined;
let spill: FileSpillStore | undefined;

describeDriverConformance('local (node-pty) in a bubblewrap sandbox', {
  kind: 'local',
  sandbox: resolveSandboxRules(
    { write: [process.cwd(), homedir()] },
    { home: homedir(), cwd: process.cwd() },
  )!,
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
});
