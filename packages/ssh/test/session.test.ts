/**
 * SSH sessions beyond the driver conformance suite (test/conformance.test.ts, which runs prompts,
 * full-screen programs, signals and kills for every driver): the login shell and host, rc files, other
 * shells, and cleanup of remote processes and channels.
 */
import type { SessionManager } from '@conch/core';
import {
  expectHostileBashrcSurvived,
  expectPosixShWorks,
  expectZshWorks,
  HOSTILE_BASHRC,
  waitFor,
} from '@conch/core/testing';
import { createTestManager, pidsWithEnv, type TestManager } from '@conch/node/testing';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshConnection } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture;
let sshd: Sshd;
let conn: SshConnection;
let engine: TestManager;
let manager: SessionManager;
let sid: string;
let work: string;
let remote: { python: boolean; vim: boolean; less: boolean; zsh: boolean };

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  conn = await connectTo(fx, sshd);
  engine = createTestManager({ defaults: { writeDeadlineMs: 1500 } });
  manager = engine.manager;
  const probe = await conn.driver.exec(
    'mktemp -d; for p in python3 vim less zsh; do command -v $p >/dev/null && echo $p=1 || echo $p=0; done',
  );
  const lines = probe.stdout.trim().split('\n');
  work = lines[0] ?? '/tmp';
  const has = (name: string) => lines.includes(`${name}=1`);
  remote = { python: has('python3'), vim: has('vim'), less: has('less'), zsh: has('zsh') };
  // No shell given: the remote user's login shell.
  const session = await manager.openSession(conn.driver, {
    kind: 'ssh',
    host: conn.host,
    port: conn.port,
    username: conn.username,
    cwd: work,
  });
  sid = session.id;
});

afterAll(async () => {
  await engine?.close();
  await conn?.driver.dispose();
  await fx?.dispose();
});

const run = (command: string, extra: Record<string, unknown> = {}) =>
  manager.execute({ command, session_id: sid, ...extra });

describe('the session', () => {
  it('runs the login shell in the given cwd and reports the host', async () => {
    const info = manager.listSessions().find((s) => s.session_id === sid);
    expect(info).toMatchObject({
      kind: 'ssh',
      shell: '/bin/bash',
      host: '127.0.0.1',
      port: sshd.port,
      username: fx.user,
      cwd: work,
    });
    expect(typeof info?.pid).toBe('number');
    expect((await run('whoami; echo $CONCH $TERM')).output).toBe(`${fx.user}\n1 xterm-256color`);
  });
});

describe('shells and rc files', () => {
  it('survives a custom PS1, PROMPT_COMMAND and vi mode in .bashrc', async () => {
    const home = `${work}/home-rc`;
    await conn.driver.exec(`mkdir -p ${home} && cat > ${home}/.bashrc`, {
      stdin: HOSTILE_BASHRC,
    });
    // Closing an SSH session disposes its driver: each extra session gets its own connection.
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, {
      kind: 'ssh',
      shell: '/bin/bash',
      env: { HOME: home },
    });
    await expectHostileBashrcSurvived((command) => manager.execute({ command, session_id: s.id }));
    await manager.closeSession(s.id);
  });

  it('works with POSIX sh (dash)', async () => {
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, { kind: 'ssh', shell: '/bin/sh' });
    await expectPosixShWorks((command) => manager.execute({ command, session_id: s.id }));
    await manager.closeSession(s.id);
  });

  it('works with zsh', async (ctx) => {
    if (!remote.zsh) ctx.skip();
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, { kind: 'ssh', shell: 'zsh' });
    await expectZshWorks((command) => manager.execute({ command, session_id: s.id }));
    await manager.closeSession(s.id);
  });

  it('refuses a shell that does not exist on the host', async () => {
    const other = await connectTo(fx, sshd);
    await expect(
      manager.openSession(other.driver, { kind: 'ssh', shell: '/bin/no-such-shell' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await other.driver.dispose();
  });
});

describe('cleanup', () => {
  it('closing a session leaves no remote process and no channel behind', async () => {
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, { kind: 'ssh', shell: '/bin/bash' });
    await manager.execute({ command: 'sleep 100 &', session_id: s.id });
    await manager.execute({ command: "sh -c '(setsid sleep 201 &)'", session_id: s.id });
    const bg = await manager.execute({ command: 'sleep 200', session_id: s.id, background: true });
    // The test runs on the same machine as sshd, so it can look at the remote processes directly.
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', s.id).length >= 4);
    const closed = await manager.closeSession(s.id);
    expect(closed.killed_command_ids).toContain(bg.command_id);
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', s.id).length === 0, {
      timeoutMs: 10_000,
      what: 'remote processes to go',
    });
    expect(other.driver.liveCount()).toBe(0);
    expect(other.driver.connectionCount()).toBe(0);
  });
});
