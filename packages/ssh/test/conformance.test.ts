/**
 * The core's driver conformance suite, run against a real OpenSSH server on 127.0.0.1: the same cases
 * the local driver passes.
 */
import { describeDriverConformance } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { countWithCommandId } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { createSshFixture, type SshFixture } from '@conch/ssh/testing';
import type { SshDriver } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture | undefined;
let driver: SshDriver | undefined;
let spill: FileSpillStore | undefined;

describeDriverConformance('ssh (ssh2 → OpenSSH)', {
  kind: 'ssh',
  driver: async () => {
    fx = await createSshFixture();
    const sshd = await fx.startSshd();
    driver = (await connectTo(fx, sshd)).driver;
    return driver;
  },
  teardown: async () => {
    await driver?.dispose();
    spill?.dispose(true);
    await fx?.dispose();
  },
  spill: () => {
    spill = new FileSpillStore({});
    return spill;
  },
  screen: createXtermScreen,
  countWithCommandId: async (id) => countWithCommandId(id),
  denyRm: () => new Policy(policyConfigFromFlags({ deny: ['rm'] })),
});
