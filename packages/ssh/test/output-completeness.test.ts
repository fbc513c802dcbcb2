/**
 * Reliability: the output-completeness suite over a real OpenSSH server on 127.0.0.1 (background,
 * isolated and foreground commands, and a command that ends the remote shell, 50 runs each); the lost
 * bytes go to `.reliability/output-completeness-ssh.json`.
 */
import { describeOutputCompleteness } from '@conch/core/testing';
import { withNodeHost, writeReliabilityReport } from '@conch/node/testing';
import { sshDriverUnderTest } from './helpers.js';

describeOutputCompleteness(
  'ssh (ssh2 → OpenSSH)',
  withNodeHost({
    kind: 'ssh',
    runs: 50,
    ...sshDriverUnderTest(),
    report: (bytesLost: number) => writeReliabilityReport('output-completeness-ssh', { bytesLost }),
  }),
);
