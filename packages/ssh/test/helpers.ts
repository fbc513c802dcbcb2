/**
 * Helpers shared by the SSH tests: connecting to a fixture's sshd with a throwaway known_hosts file. (The
 * fixture's sshd runs on this machine: its processes are counted with `@conch/node/testing`.)
 */
import { join } from 'node:path';
import type { Sshd, SshFixture } from '@conch/ssh/testing';
import { type ConnectSshOptions, connectSsh, type SshConnection } from '../src/index.js';

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
