/**
 * `@conch/ssh/testing`: a real OpenSSH server for integration tests (this package's and the apps'), with a
 * test user, client keys, an ssh-agent and host keys. Needs root, `/usr/sbin/sshd` (Debian's
 * openssh-server) and `python3`. See {@link createSshFixture}.
 */

/** The /proc helpers, from their one definition in `@conch/node/testing` (re-exported for SSH tests). */
export { pidsWithEnv, processTree } from '@conch/node/testing';
export {
  createSshFixture,
  freePort,
  killAndWait,
  portAccepts,
  REAPER,
  type Sshd,
  type SshdOptions,
  type SshFixture,
  TEST_USER,
  until,
} from './sshd.js';
