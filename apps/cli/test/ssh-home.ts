/**
 * The setup of the CLI's SSH tests: one real sshd on 127.0.0.1 (`@conch/ssh/testing`) for the test file, and per
 * test a private daemon home whose HOME (inherited by the daemon) has an empty ~/.ssh and no ssh-agent.
 */

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type CliHome, createHome, endTtyTest } from './harness.js';

/** What {@link useSshHome} gives each test (read inside the test, after its hooks ran). */
export interface SshHome {
  readonly fx: SshFixture;
  readonly sshd: Sshd;
  readonly home: CliHome;
  /** The daemon's HOME (its ~/.ssh starts empty). */
  readonly userHome: string;
}

/** Registers the hooks (see the module doc); stops the terminals and the daemon after each test. */
export function useSshHome(): SshHome {
  const state: { fx?: SshFixture; sshd?: Sshd; home?: CliHome; userHome?: string } = {};
  beforeAll(async () => {
    state.fx = await createSshFixture();
    state.sshd = await state.fx.startSshd();
  }, 120_000);
  afterAll(async () => {
    await state.fx?.dispose();
  }, 120_000);
  beforeEach(() => {
    const home = createHome();
    const userHome = join(home.dir, 'user');
    mkdirSync(join(userHome, '.ssh'), { recursive: true });
    home.env.HOME = userHome;
    home.env.SSH_AUTH_SOCK = '';
    state.home = home;
    state.userHome = userHome;
  });
  afterEach(() => endTtyTest(state.home));
  return {
    get fx() {
      return state.fx!;
    },
    get sshd() {
      return state.sshd!;
    },
    get home() {
      return state.home!;
    },
    get userHome() {
      return state.userHome!;
    },
  };
}
