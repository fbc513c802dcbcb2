/**
 * `@conch/ssh/testing`: a real OpenSSH server for integration tests (this package's and the apps'), with a
 * test user, client keys, an ssh-agent and host keys. Needs root, `/usr/sbin/sshd` (Debian's
 * openssh-server) and `python3`. See {@link createSshFixture}.
 */

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
} from './sshd.js';
