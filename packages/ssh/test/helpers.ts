/**
 * Helpers shared by the SSH tests: connecting to a fixture's sshd with a throwaway known_hosts file, and the
 * driver the core's driver suites run on. (The
 * fixture's sshd runs on this machine: its processes are counted with `@conch/node/testing`.)
 */
import { join } from 'node:path';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { type ConnectSshOptions, connectSsh, type SshConnection, type SshDriver } from '../src/index.js';

let counter = 0;

/** Connects as the test user with the plain key, accept-new into a fresh known_hosts, no config. */
export function connectTo(
  fx: SshFixture,
  sshd: Sshd,
  extra: Partial<ConnectSshOptions> = {},
): Promise<SshConnection> {
  return connectSsh({
    host: '127.0.0.1',
    port: sshd.port,
    username: fx.user,
    privateKeyPath: fx.keys.plain,
    useAgent: false,
    hostKeyPolicy: 'accept-new',
    knownHostsPath: join(fx.dir, `known_hosts_${process.pid}_${++counter}`),
    globalKnownHostsPath: null,
    configPath: null,
    connectTimeoutS: 10,
    ...extra,
  });
}

/**
 * The driver under test of the core's driver suites: `driver()` starts a fixture and its sshd and
 * connects to it; `teardown()` disposes the driver and the fixture (which stops the sshd).
 */
export function sshDriverUnderTest(): { driver: () => Promise<SshDriver>; teardown: () => Promise<void> } {
  let fx: SshFixture | undefined;
  let driver: SshDriver | undefined;
  return {
    driver: async () => {
      fx = await createSshFixture();
      const sshd = await fx.startSshd();
      driver = (await connectTo(fx, sshd)).driver;
      return driver;
    },
    teardown: async () => {
      await driver?.dispose();
      await fx?.dispose();
    },
  };
}
