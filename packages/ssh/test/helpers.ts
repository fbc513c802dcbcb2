/**
 * Helpers shared by the SSH tests: connecting to a fixture's sshd with a throwaway known_hosts file, and
 * counting marked remote processes through the driver itself.
 */
import { join } from 'node:path';
import type { Sshd, SshFixture } from '@conch/ssh/testing';
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

/** Number of live remote processes whose environment has CONCH_COMMAND_ID=id (run on the host itself). */
export async function countMarkedRemote(driver: SshDriver, id: string): Promise<number> {
  const r = await driver.exec(`grep -lzxF 'CONCH_COMMAND_ID=${id}' /proc/[0-9]*/environ 2>/dev/null | wc -l`);
  return Number(r.stdout.trim());
}
