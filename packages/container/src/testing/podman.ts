/**
 * Test harness: a real container engine, Podman's Docker-compatible API service, started by the tests on a
 * private socket with its own storage (its own `--root`, `--runroot` and `--tmpdir` under the OS temp dir),
 * so that concurrent test files never see each other's containers and nothing of the machine's own storage
 * is touched. The test image is imported into it (see {@link testImageTarball}).
 *
 * `stop()` removes every container, stops the service, and kills the engine's monitor processes (Podman
 * keeps one per exec for minutes after it ended), then removes the storage: nothing is left behind.
 * Needs root, `podman` and a runtime it can use (this machine: `runc`, with the containers.conf of
 * docs/containers.md).
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isAlive } from '@conch/node/testing';
import { testImageTag, testImageTarball } from './test-image.js';

const run = promisify(execFile);

/** One running Podman API service with its private storage. */
export interface PodmanService {
  /** The socket path, and the address to give conch (`unix://…`). */
  readonly socketPath: string;
  readonly address: string;
  /** The test image, imported into this service's storage. */
  readonly image: string;
  /** Runs the `podman` CLI against this service's storage; resolves with its stdout. */
  podman(...args: string[]): Promise<string>;
  /** The names of the containers in this storage (all states), optionally only those with a label. */
  containers(label?: string): Promise<string[]>;
  /** Kills the service process with SIGKILL (the engine "crashes"; containers keep running). */
  crash(): Promise<void>;
  /** Starts the service again after {@link crash} (same socket and storage). */
  restart(): Promise<void>;
  /** Removes every container, stops the service and every engine process, removes the storage. */
  stop(): Promise<void>;
}

/** True when this machine can run the Podman service tests (root and a podman binary). */
export function podmanAvailable(): boolean {
  return process.getuid?.() === 0 && ['/usr/bin/podman', '/usr/local/bin/podman'].some((p) => existsSync(p));
}

/** Resolves true once the socket answers `GET /_ping` with OK. */
function pingSocket(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve(body.trim() === 'OK'));
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`podman fixture: ${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids of live processes whose command line mentions `text` (the fixture's private directory). */
function processesMentioning(text: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(text) && isAlive(pid)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/** Starts a Podman API service with private storage and the test image (see the module doc). */
export async function startPodmanService(): Promise<PodmanService> {
  const dir = mkdtempSync(join(tmpdir(), 'conch-podman-'));
  const socketPath = join(dir, 'podman.sock');
  const global = [
    '--root',
    join(dir, 'root'),
    '--runroot',
    join(dir, 'runroot'),
    '--tmpdir',
    join(dir, 'tmp'),
  ];
  const podman = async (...args: string[]) =>
    (await run('podman', [...global, ...args], { maxBuffer: 16 << 20 })).stdout;
  let child: ChildProcess | undefined;
  const start = async () => {
    const service = spawn('podman', [...global, 'system', 'service', '--time=0', `unix://${socketPath}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    service.stderr?.on('data', (c: Buffer) => {
      log = (log + c.toString()).slice(-4000);
    });
    child = service;
    try {
      await until(
        async () => {
          if (service.exitCode !== null) throw new Error(`podman system service exited: ${log}`);
          return existsSync(socketPath) && (await pingSocket(socketPath));
        },
        30_000,
        'the podman service answering',
      );
    } catch (error) {
      service.kill('SIGKILL');
      throw error;
    }
  };
  const stopService = async (signal: NodeJS.Signals) => {
    const service = child;
    child = undefined;
    if (!service || service.exitCode !== null || service.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => service.once('exit', () => resolve()));
    service.kill(signal);
    await exited;
  };

  await start();
  const tarball = testImageTarball();
  const image = testImageTag(tarball);
  await podman('import', '--change', 'ENV PATH=/usr/local/bin:/usr/bin:/bin', tarball, image);

  const containers = async (label?: string) =>
    (await podman('ps', '-a', '--format', '{{.Names}}', ...(label ? ['--filter', `label=${label}`] : [])))
      .split('\n')
      .filter(Boolean);

  return {
    socketPath,
    address: `unix://${socketPath}`,
    image,
    podman,
    containers,
    async crash() {
      await stopService('SIGKILL');
    },
    async restart() {
      rmSync(socketPath, { force: true });
      await start();
    },
    async stop() {
      try {
        if (child) await podman('rm', '--all', '--force', '--time', '0').catch(() => '');
        else {
          await start();
          await podman('rm', '--all', '--force', '--time', '0').catch(() => '');
        }
      } finally {
        await stopService('SIGTERM');
        // The engine's monitors (one per container and per exec, which outlive their exec by minutes) and
        // any cleanup they started: every process that names this storage.
        for (const pid of processesMentioning(dir)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
        await until(() => processesMentioning(dir).length === 0, 15_000, 'the engine processes ending');
        await run('umount', ['-R', join(dir, 'root', 'overlay')]).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
