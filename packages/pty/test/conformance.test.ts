import { homedir } from 'node:os';
import { resolveSandboxRules, type SandboxRules } from '@conch/core';
import { describeDriverConformance } from '@conch/core/testing';
import { processFacts } from '@conch/node';
import { withNodeHost } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

/**
 * The suite against plain local sessions, and against sandboxed ones (real bubblewrap, docs/sandbox.md):
 * the default rules plus a writable home (vim writes ~/.viminfo; the secret stores stay hidden).
 */
const SANDBOX = resolveSandboxRules(
  { write: [process.cwd(), homedir()] },
  { home: homedir(), cwd: process.cwd() },
);

for (const [name, sandbox] of [
  ['local (node-pty)', undefined],
  ['local (node-pty) in a bubblewrap sandbox', SANDBOX],
] as [string, SandboxRules | undefined][]) {
  let driver: LocalDriver | undefined;
  describeDriverConformance(
    name,
    withNodeHost({
      kind: 'local',
      ...(sandbox ? { sandbox } : {}),
      driver: async () => {
        driver = createLocalDriver();
        return driver;
      },
      teardown: async () => {
        await driver?.dispose();
      },
      denyRm: () => new Policy(policyConfigFromFlags({ deny: ['rm'] })),
    }),
  );
}

it('reads process facts the way CONCH_PROCESS_FACTS says (ps when forced, else /proc here)', () => {
  expect(processFacts().kind).toBe(process.env.CONCH_PROCESS_FACTS === 'ps' ? 'ps' : 'proc');
});
