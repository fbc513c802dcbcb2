/**
 * The core's driver conformance suite, run against a real OpenSSH server on 127.0.0.1: the same cases
 * the local driver passes.
 */
import { describeDriverConformance } from '@conch/core/testing';
import { withNodeHost } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { sshDriverUnderTest } from './helpers.js';

describeDriverConformance(
  'ssh (ssh2 → OpenSSH)',
  withNodeHost({
    kind: 'ssh',
    ...sshDriverUnderTest(),
    denyRm: () => new Policy(policyConfigFromFlags({ deny: ['rm'] })),
  }),
);
