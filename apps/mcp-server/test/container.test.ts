/**
 * `create_container` end to end: the REAL built server (`dist/bin.cjs`) over stdio, driven by the SDK's
 * Client, against a REAL container engine (Podman's Docker-compatible service, started by the test on a
 * private socket with private storage, `@conch/container/testing`) and a test image imported from a root
 * file system built on this machine. Sessions in a created container (cd and export persist, exit codes,
 * prompts, background commands killed with their tree), close_session removing the container, attaching
 * to a running container and leaving it running, the orphan sweep after a SIGKILL, the faults (engine
 * down, image missing, container killed mid-command), the command policy, and the listing rule.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PodmanService, podmanAvailable, startPodmanService } from '@conch/container/testing';
import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandResult, type ServerHandle, type StartOptions, startServer } from './harness.js';

/** The Session of create_container as the tests read it. */
interface ContainerSession {
  session_id: string;
  kind: string;
  state: string;
  container?: string;
  image?: string;
  cwd: string | null;
}

let podman: PodmanService;
const servers: ServerHandle[] = [];

/** A server on the test engine (`--docker-host`), closed in afterAll. */
async function server(options: StartOptions = {}): Promise<ServerHandle> {
  const s = await startServer({
    ...options,
    args: ['--docker-host', podman.address, ...(options.args ?? [])],
  });
  servers.push(s);
  return s;
}

describe.runIf(podmanAvailable())('create_container (built server, real Podman service)', () => {
  beforeAll(async () => {
    podman = await startPodmanService();
  }, 180_000);

  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => {});
    const left = await podman.containers('io.conch.owner');
    await podman.stop();
    // Nothing conch created outlives its sessions and servers (the attach test's own container aside).
    expect(left).toEqual([]);
  }, 180_000);

  it('is listed when an engine is configured; runs commands in a container it creates and removes at close', async () => {
    const s = await server();
    expect(s.tools.map((t) => t.name)).toContain('create_container');
    const session = await s.ok<ContainerSession>('create_container', { image: podman.image, name: 'box' });
    expect(session).toMatchObject({ kind: 'container', container: 'conch-box', image: podman.image });
    expect(await podman.containers('io.conch.owner')).toEqual(['conch-box']);
    const sid = session.session_id;

    // cd and export persist; exit codes and cwd are exact.
    expect(
      await s.exec('mkdir -p /tmp/work && cd /tmp/work && export GREETING=hello', { session_id: sid }),
    ).toMatchObject({
      status: 'completed',
      exit_code: 0,
      cwd: '/tmp/work',
    });
    expect(
      await s.exec('echo "$GREETING from $(pwd)"; exit_code_test() { return 3; }; exit_code_test', {
        session_id: sid,
      }),
    ).toMatchObject({
      status: 'completed',
      exit_code: 3,
      output: 'hello from /tmp/work',
    });
    // The container is this machine's kernel but its own file system and network: none by default.
    expect(
      (await s.exec('cat /etc/hostname >/dev/null; ls /sys/class/net', { session_id: sid })).output.split(
        '\n',
      ),
    ).toEqual(['lo']);

    // A prompt is awaiting_input, and respond answers it.
    const asked = await s.exec('read -r -p "Name? " who; echo "hi $who"', {
      session_id: sid,
      pause_timeout: 5,
    });
    expect(asked).toMatchObject({ status: 'partial', state: 'awaiting_input' });
    expect(
      await s.ok<CommandResult>('respond', { command_id: asked.command_id, text: 'conch' }),
    ).toMatchObject({
      status: 'completed',
      exit_code: 0,
      output: expect.stringContaining('hi conch'),
    });

    // A background server (with a child) is listed, and kill_process kills its whole tree.
    const bg = await s.exec('sh -c "sleep 300 & sleep 301; wait"', { session_id: sid, background: true });
    expect(bg).toMatchObject({ status: 'partial', reason: 'background' });
    const listed = await s.ok<{ processes: { command_id: string; state: string }[] }>('list_processes', {
      session_id: sid,
    });
    expect(listed.processes.find((p) => p.command_id === bg.command_id)?.state).toBe('running');
    expect(
      Number((await s.exec('ps -e -o args= | grep -c "^sleep 30[01]$"', { session_id: sid })).output),
    ).toBe(2);
    expect(await s.ok('kill_process', { command_id: bg.command_id, grace_s: 1 })).toMatchObject({
      result: 'killed',
    });
    expect((await s.exec('ps -e -o args= | grep -c "^sleep 30[01]$"', { session_id: sid })).output).toBe('0');

    await s.ok('close_session', { session_id: sid });
    expect(await podman.containers('io.conch.owner')).toEqual([]);
  });

  it('attaches to a running container and leaves it running at close', async () => {
    await podman.podman(
      'run',
      '-d',
      '--name',
      'pet',
      podman.image,
      '/bin/sh',
      '-c',
      'trap "exit 0" TERM; while sleep 3600 & wait $!; do :; done',
    );
    const s = await server();
    const session = await s.ok<ContainerSession>('create_container', { container: 'pet' });
    expect(session).toMatchObject({ kind: 'container', container: 'pet' });
    expect(await s.exec('echo inside; (exit 4)', { session_id: session.session_id })).toMatchObject({
      exit_code: 4,
      output: 'inside',
    });
    await s.exec('sleep 500', { session_id: session.session_id, background: true });
    const sleeps = () =>
      podman.podman('exec', 'pet', '/bin/sh', '-c', 'ps -e -o args= | grep -c "^sleep 500$" || :');
    expect(await sleeps()).toBe('1\n');
    await s.ok('close_session', { session_id: session.session_id });
    expect(await podman.containers()).toContain('pet');
    // What conch started in it is gone with the session.
    expect(await sleeps()).toBe('0\n');
    await podman.podman('rm', '-f', '-t', '0', 'pet');
  });

  it('removes its containers at shutdown, and at its next start those of a server killed with SIGKILL (unless keep)', async () => {
    const s = await server();
    await s.ok('create_container', { image: podman.image, name: 'orphan' });
    await s.ok('create_container', { image: podman.image, name: 'kept', keep: true });
    s.child.kill('SIGKILL');
    await waitFor(() => s.child.exitCode !== null || s.child.signalCode !== null, {
      what: 'the server dying',
    });
    expect((await podman.containers('io.conch.owner')).sort()).toEqual(['conch-kept', 'conch-orphan']);
    const next = await server();
    await waitFor(async () => !(await podman.containers('io.conch.owner')).includes('conch-orphan'), {
      what: 'the orphan removed',
      timeoutMs: 30_000,
    });
    expect(await podman.containers('io.conch.owner')).toEqual(['conch-kept']);
    // A server that shuts down cleanly removes its containers itself.
    await next.ok('create_container', { image: podman.image, name: 'at-shutdown' });
    expect(await podman.containers('io.conch.owner')).toContain('conch-at-shutdown');
    await next.close();
    expect(await podman.containers('io.conch.owner')).toEqual(['conch-kept']);
    await podman.podman('rm', '-f', '-t', '0', 'conch-kept');
  });

  it('says IMAGE_NOT_FOUND for a missing image, and a container killed mid-command makes command and session lost', async () => {
    const s = await server();
    const missing = await s.call('create_container', { image: 'localhost/no-such-image:1' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('IMAGE_NOT_FOUND');
    expect(missing.text).toContain('localhost/no-such-image:1');
    expect(missing.text).toMatch(/pull/);

    const session = await s.ok<ContainerSession>('create_container', { image: podman.image, name: 'doomed' });
    const running = await s.exec('echo started; sleep 300', {
      session_id: session.session_id,
      pause_timeout: 1,
    });
    expect(running.status).toBe('partial');
    await podman.podman('kill', 'conch-doomed');
    const after = await s.ok<CommandResult>('read_output', {
      command_id: running.command_id,
      pause_timeout: 30,
    });
    expect(after).toMatchObject({ status: 'completed', state: 'lost' });
    const sessions = await s.ok<{ sessions: ContainerSession[] }>('list_sessions');
    expect(sessions.sessions.find((x) => x.session_id === session.session_id)?.state).toBe('lost');
    // The server keeps serving its other sessions.
    expect((await s.exec('echo still here')).output).toBe('still here');
    await s.ok('close_session', { session_id: session.session_id });
  });

  it('survives an engine restart: its sessions become lost without a hang, and new ones open once it is back', async () => {
    const s = await server();
    const session = await s.ok<ContainerSession>('create_container', {
      image: podman.image,
      name: 'restart',
    });
    const running = await s.exec('echo started; sleep 300', {
      session_id: session.session_id,
      pause_timeout: 1,
    });
    expect(running.status).toBe('partial');
    await podman.crash();
    const after = await s.ok<CommandResult>('read_output', {
      command_id: running.command_id,
      pause_timeout: 30,
    });
    expect(after).toMatchObject({ status: 'completed', state: 'lost' });
    expect((await s.exec('echo still here')).output).toBe('still here');
    await podman.restart();
    // Closing the lost session removes the container conch created, now that the engine answers again.
    await s.ok('close_session', { session_id: session.session_id });
    expect(await podman.containers('io.conch.owner')).toEqual([]);
    const again = await s.ok<ContainerSession>('create_container', {
      image: podman.image,
      name: 'after-restart',
    });
    expect((await s.exec('echo back', { session_id: again.session_id })).output).toBe('back');
    await s.ok('close_session', { session_id: again.session_id });
  });

  it('bind-mounts host directories (read-only with :ro) and names a malformed mount', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conch-mount-'));
    writeFileSync(join(dir, 'hello.txt'), 'from the host\n');
    try {
      const s = await server();
      const bad = await s.call('create_container', { image: podman.image, mounts: ['relative:/work'] });
      expect(bad.isError).toBe(true);
      expect(bad.text).toContain('INVALID_ARGUMENT');
      expect(bad.text).toContain('"relative:/work"');
      const session = await s.ok<ContainerSession>('create_container', {
        image: podman.image,
        name: 'mounted',
        mounts: [`${dir}:/work`, `${dir}:/readonly:ro`],
        workdir: '/work',
      });
      const sid = session.session_id;
      expect(await s.exec('cat hello.txt && echo written > out.txt', { session_id: sid })).toMatchObject({
        exit_code: 0,
        output: 'from the host',
        cwd: '/work',
      });
      expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('written\n');
      const ro = await s.exec('echo no > /readonly/x.txt', { session_id: sid });
      expect(ro.exit_code).not.toBe(0);
      expect(ro.output).toMatch(/Read-only file system/);
      await s.ok('close_session', { session_id: sid });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies the command policy inside containers', async () => {
    const s = await server({ args: ['--deny', 'rm'] });
    const session = await s.ok<ContainerSession>('create_container', {
      image: podman.image,
      name: 'policed',
    });
    const denied = await s.call('execute', {
      command: 'touch /tmp/x && rm /tmp/x',
      session_id: session.session_id,
    });
    expect(denied.isError).toBe(true);
    expect(denied.text).toContain('POLICY_DENIED');
    expect((await s.exec('ls /tmp/x 2>&1; echo $?', { session_id: session.session_id })).output).toMatch(
      /No such file|2$/,
    );
    await s.ok('close_session', { session_id: session.session_id });
  });

  it('says CONTAINER_ENGINE_UNREACHABLE, naming where it looked, when the configured engine is down', async () => {
    const s = await startServer({ args: ['--docker-host', 'unix:///tmp/conch-no-engine-here.sock'] });
    servers.push(s);
    expect(s.tools.map((t) => t.name)).toContain('create_container');
    const r = await s.call('create_container', { image: podman.image });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('CONTAINER_ENGINE_UNREACHABLE');
    expect(r.text).toContain('unix:///tmp/conch-no-engine-here.sock');
    expect((await s.exec('echo fine')).output).toBe('fine');
  });
});

/** The usual engine sockets of this machine (without XDG_RUNTIME_DIR's), when one exists. */
const usualSocket = ['/var/run/docker.sock', '/run/podman/podman.sock'].some((p) => existsSync(p));

describe('create_container listing', () => {
  it.skipIf(usualSocket)(
    'is not listed when no engine is configured and none is at the usual places',
    async () => {
      const s = await startServer({ env: { DOCKER_HOST: '', XDG_RUNTIME_DIR: '/nonexistent-conch-test' } });
      try {
        expect(s.tools.map((t) => t.name)).not.toContain('create_container');
      } finally {
        await s.close();
      }
    },
  );
});
