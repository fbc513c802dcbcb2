/**
 * Reliability: the output-completeness suite over a real OpenSSH server on 127.0.0.1 (background,
 * isolated and foreground commands, and a command that ends the remote shell, 50 runs each); the lost
 * bytes go to `.reliability/output-completeness-ssh.json`.
 */
import { describeOutputCompleteness } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { writeReliabilityReport } from '@conch/node/testing';
import { createSshFixture, type SshFixture } from '@conch/ssh/testing';
import type { SshDriver } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture | undefined;
let driver: SshDriver | undefined;
let spill: FileSpillStore | undefined;

describeOutputCompleteness('ssh (ssh2 → OpenSSH)', {
  kind: 'ssh',
  runs: 50,
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
  report: (bytesLost) => writeReliabilityReport('output-completeness-ssh', { bytesLost }),
});
