/**
 * What happens to SSH sessions over time: the server dying or the link freezing mid-command (`lost`
 * within the keepalive window, other sessions unaffected, reconnecting works), silent commands that are
 * not mistaken for a dead link, more channels than the server's MaxSessions, and write deadlines.
 */
import type { SessionInfo, SessionManager } from '@conch/core';
import { waitFor } from '@conch/core/testing';
import { countWithCommandId, createTestManager, pidsWithEnv, type TestManager } from '@conch/node/testing';
import { createSshFixture, killAndWait, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshConnection } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture;
let sshd: Sshd;
let engine: TestManager;
let manager: SessionManager;
const connections: SshConnection[] = [];

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  engine = createTestManager();
  manager = engine.manager;
});

afterAll(async () => {
  await engine?.close();
  for (const c of connections) await c.driver.dispose();
  await fx?.dispose();
});

/** Connects to `server` and opens a session on the new driver (one driver per session, as the face does). */
async function openSshSession(
  server: Sshd,
  keepaliveIntervalS = 1,
  extra: Parameters<typeof connectTo>[2] = {},
) {
  const conn = await connectTo(fx, server, { keepaliveIntervalS, ...extra });
  connections.push(conn);
  const session = await manager.openSession(conn.driver, {
    kind: 'ssh',
    host: conn.host,
    port: conn.port,
    username: conn.username,
    shell: '/bin/bash',
  });
  return { conn, id: session.id };
}

function sessionInfo(id: string): SessionInfo | undefined {
  return manager.listSessions().find((s) => s.session_id === id);
}

describe('losing the server', () => {
  it('killing sshd mid-command: the command and the session are lost, others go on, reconnecting works', async () => {
    const doomed = await fx.startSshd();
    // Keepalives too slow to notice anything within the read's pause: only the connection's close can.
    const victim = await openSshSession(doomed, 60);
    const other = await openSshSession(sshd);
    const r = await manager.execute({
      command: 'echo started; sleep 300',
      session_id: victim.id,
      pause_timeout: 0.5,
    });
    expect(r).toMatchObject({ status: 'partial', output: 'started' });

    const lost = new Promise<string>((resolve) => victim.conn.driver.onLost(resolve));
    // Kill the per-connection sshd processes (the listener stays, so that reconnecting can work).
    await killAndWait(doomed.tree().filter((pid) => pid !== doomed.pid));
    const done = await manager.readOutput({ command_id: r.command_id, pause_timeout: 15, total_timeout: 15 });
    expect(done).toMatchObject({ status: 'completed', state: 'lost', exit_code: null });
    expect(await lost).toMatch(/127\.0\.0\.1/);
    expect(sessionInfo(victim.id)?.state).toBe('lost');
    const refused = await manager
      .execute({ command: 'true', session_id: victim.id })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'SESSION_LOST' });

    // The other session did not notice.
    expect((await manager.execute({ command: 'echo still-here', session_id: other.id })).output).toBe(
      'still-here',
    );

    // The remote shell and its job died with their connection (SIGHUP from the closed terminal).
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', victim.id).length === 0, {
      timeoutMs: 10_000,
      what: 'remote processes to die',
    });

    await manager.closeSession(victim.id);
    const again = await openSshSession(doomed);
    expect((await manager.execute({ command: 'echo reconnected', session_id: again.id })).output).toBe(
      'reconnected',
    );
    await manager.closeSession(again.id);
    await manager.closeSession(other.id);
    await doomed.stop();
  });

  it('a frozen link (sshd stopped) is lost within the keepalive window, without hanging', async () => {
    const frozen = await fx.startSshd();
    const victim = await openSshSession(frozen, 1);
    const r = await manager.execute({ command: 'sleep 300', session_id: victim.id, pause_timeout: 0.3 });
    expect(r.status).toBe('partial');
    const lost = new Promise<string>((resolve) => victim.conn.driver.onLost(resolve));
    frozen.signalTree('SIGSTOP');
    try {
      const done = await manager.readOutput({
        command_id: r.command_id,
        pause_timeout: 20,
        total_timeout: 20,
      });
      expect(done).toMatchObject({ status: 'completed', state: 'lost' });
      // Lost by the keepalives (1 s × (3 unanswered + 1): about 4 s), within the read's 20 s pause.
      expect(await lost).toMatch(/keepalive/i);
      expect(sessionInfo(victim.id)?.state).toBe('lost');
      await manager.closeSession(victim.id);
    } finally {
      await frozen.stop();
    }
  });

  it('a remote command silent for longer than twice the keepalive interval is not lost', async () => {
    const s = await openSshSession(sshd, 1);
    const r = await manager.execute({ command: 'sleep 3.5; echo woke', session_id: s.id, pause_timeout: 10 });
    expect(r).toMatchObject({ status: 'completed', state: 'exited', exit_code: 0, output: 'woke' });
    const bg = await manager.execute({
      command: 'sleep 3; echo bg-woke',
      session_id: s.id,
      background: true,
    });
    const bgDone = await manager.readOutput({ command_id: bg.command_id, pause_timeout: 10 });
    expect(bgDone).toMatchObject({ status: 'completed', state: 'exited', exit_code: 0, output: 'bg-woke' });
    expect(sessionInfo(s.id)?.state).toBe('idle');
    await manager.closeSession(s.id);
  });
});

describe("the server's channel limit (MaxSessions)", () => {
  it('runs more commands than MaxSessions on extra connections, and kills them', async () => {
    const tight = await fx.startSshd({ maxSessions: 2 });
    try {
      const s = await openSshSession(tight, 15);
      const bgs = [];
      for (let i = 0; i < 5; i++) {
        bgs.push(
          await manager.execute({ command: `sleep 1; echo bg-${i}`, session_id: s.id, background: true }),
        );
      }
      expect(s.conn.driver.connectionCount()).toBeGreaterThan(1);
      const busy = await manager.execute({ command: 'sleep 200', session_id: s.id, background: true });
      const fg = await manager.execute({ command: 'echo foreground', session_id: s.id });
      expect(fg.output).toBe('foreground');
      for (const [i, bg] of bgs.entries()) {
        const done = await manager.readOutput({ command_id: bg.command_id, pause_timeout: 10 });
        expect(done).toMatchObject({ status: 'completed', exit_code: 0, output: `bg-${i}` });
      }
      await waitFor(async () => countWithCommandId(busy.command_id) >= 1);
      const killed = await manager.killProcess({ command_id: busy.command_id, grace_s: 1 });
      expect(killed).toMatchObject({ result: 'killed', survivors: [] });
      expect(countWithCommandId(busy.command_id)).toBe(0);
      await manager.closeSession(s.id);
    } finally {
      await tight.stop();
    }
  });

  it('with a password it keeps nothing, so the limit is a clear LIMIT_REACHED; retaining the password lifts it', async () => {
    const tight = await fx.startSshd({ maxSessions: 2 });
    try {
      const plain = await openSshSession(tight, 15, { privateKeyPath: undefined, password: fx.password });
      const first = await manager.execute({ command: 'sleep 100', session_id: plain.id, background: true });
      const second = await manager
        .execute({ command: 'sleep 100', session_id: plain.id, background: true })
        .catch((e: unknown) => e);
      expect(second).toMatchObject({ code: 'LIMIT_REACHED' });
      expect((second as Error).message).toMatch(/MaxSessions/);
      expect(plain.conn.driver.connectionCount()).toBe(1);
      // No helper channel is free: the kill falls back to the SSH signal request on the command's channel.
      const killed = await manager.killProcess({ command_id: first.command_id, grace_s: 0.5 });
      expect(killed.result).toBe('killed');
      await manager.closeSession(plain.id);

      const retained = await openSshSession(tight, 15, {
        privateKeyPath: undefined,
        password: fx.password,
        retainPasswordForExtraConnections: true,
      });
      const a = await manager.execute({
        command: 'sleep 0.5; echo a',
        session_id: retained.id,
        background: true,
      });
      const b = await manager.execute({
        command: 'sleep 0.5; echo b',
        session_id: retained.id,
        background: true,
      });
      expect((await manager.readOutput({ command_id: a.command_id, pause_timeout: 10 })).output).toBe('a');
      expect((await manager.readOutput({ command_id: b.command_id, pause_timeout: 10 })).output).toBe('b');
      expect(retained.conn.driver.connectionCount()).toBeGreaterThan(1);
      await manager.closeSession(retained.id);
    } finally {
      await tight.stop();
    }
  });
});

describe('terminal channels', () => {
  it('reports a program that cannot start, and a missing cwd, as invalid arguments', async () => {
    const conn = await connectTo(fx, sshd);
    connections.push(conn);
    const base = { args: [], env: {}, cols: 80, rows: 24 };
    await expect(
      conn.driver.spawn({ ...base, file: '/no/such/program', cwd: undefined }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(conn.driver.spawn({ ...base, file: '/bin/sh', cwd: '/no/such/dir' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('/no/such/dir'),
    });
  });

  it('writes private files 0600 in a 0700 directory on the remote host, and removes them', async () => {
    const conn = connections[connections.length - 1]!;
    const path = await conn.driver.writePrivateFile('s_test/init.sh', 'echo \'quoted\' "$HOME"\n');
    expect(path.startsWith(`${conn.driver.privateDir}/`)).toBe(true);
    const r = await conn.driver.exec(
      `stat -c '%a %U' ${conn.driver.privateDir} ${conn.driver.privateDir}/s_test ${path}; cat ${path}`,
    );
    expect(r.stdout).toBe(`700 ${fx.user}\n700 ${fx.user}\n600 ${fx.user}\necho 'quoted' "$HOME"\n`);
    await conn.driver.removePrivateFile(path);
    expect((await conn.driver.exec(`test -e ${path}; echo $?`)).stdout.trim()).toBe('1');
    await expect(conn.driver.writePrivateFile('../escape', 'x')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    const dir = conn.driver.privateDir;
    await conn.driver.dispose();
    const check = await connectTo(fx, sshd);
    expect((await check.driver.exec(`test -e ${dir}; echo $?`)).stdout.trim()).toBe('1');
    await check.driver.dispose();
  });
});
