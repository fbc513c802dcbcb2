/**
 * `conch container` against a REAL container engine (Podman's Docker-compatible service from
 * `@conch/container/testing`), configured through the daemon's config file (`container.docker_host`): a
 * session in a container it creates, commands in it through `conch exec`, the sessions table, `conch close`
 * removing the container, and the usage and engine errors.
 */

import { type PodmanService, podmanAvailable, startPodmanService } from '@conch/container/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliHome, createHome, startDaemonWithConfig } from './harness.js';

let podman: PodmanService;
let home: CliHome;

describe.runIf(podmanAvailable())('conch container (real Podman service)', () => {
  beforeAll(async () => {
    podman = await startPodmanService();
    home = createHome();
    await startDaemonWithConfig(home, { container: { docker_host: podman.address } });
  }, 180_000);

  afterAll(async () => {
    await home?.dispose();
    const left = await podman.containers('io.conch.owner');
    await podman.stop();
    expect(left).toEqual([]);
  }, 180_000);

  it('opens a session in a new container, runs commands there, lists it, and removes it at close', async () => {
    const opened = await home.conch(['container', podman.image, '--name', 'cli-box']);
    expect(opened).toMatchObject({ code: 0 });
    expect(await podman.containers('io.conch.owner')).toEqual(['conch-cli-box']);
    const run = await home.conch([
      'exec',
      '--session',
      'cli-box',
      '--',
      'cd /tmp && echo $((6 * 7)); (exit 3)',
    ]);
    expect(run).toMatchObject({ code: 3, stdout: '42\n' });
    const sessions = await home.conch(['sessions']);
    expect(sessions.stdout).toMatch(/cli-box\s+container\s+idle\s+-\s+conch-cli-box:\/tmp/);
    expect((await home.conch(['close', 'cli-box'])).code).toBe(0);
    expect(await podman.containers('io.conch.owner')).toEqual([]);
  });

  it('says what is wrong with the arguments or the container', async () => {
    const none = await home.conch(['container']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Give an IMAGE');
    const missing = await home.conch(['container', '--attach', 'no-such-container']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No container "no-such-container"');
    const image = await home.conch(['container', 'localhost/absent:1']);
    expect(image.code).toBe(1);
    expect(image.stderr).toContain('localhost/absent:1');
    expect(image.stderr).toMatch(/pull/);
  });
});
