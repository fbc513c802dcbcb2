/**
 * SSH sessions beyond the driver conformance suite (test/conformance.test.ts, which runs prompts,
 * full-screen programs, signals and kills for every driver): the login shell and host, rc files, other
 * shells, and cleanup of remote processes and channels.
 */
import { createRealClock, SessionManager } from '@conch/core';
import { waitFor } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { pidsWithEnv } from '@conch/node/testing';
import { createSshFixture, type Sshd, type SshFixture } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshConnection } from '../src/index.js';
import { connectTo } from './helpers.js';

let fx: SshFixture;
let sshd: Sshd;
let conn: SshConnection;
let manager: SessionManager;
let spill: FileSpillStore;
let sid: string;
let work: string;
let remote: { python: boolean; vim: boolean; less: boolean; zsh: boolean };

beforeAll(async () => {
  fx = await createSshFixture();
  sshd = await fx.startSshd();
  conn = await connectTo(fx, sshd);
  spill = new FileSpillStore({});
  manager = new SessionManager({
    clock: createRealClock(),
    screen: createXtermScreen,
    spill,
    defaults: { writeDeadlineMs: 1500 },
  });
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
  await manager?.shutdown();
  await conn?.driver.dispose();
  spill?.dispose(true);
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
      stdin: [
        'PS1="\\[\\e[1;32m\\]\\u@\\h \\w \\$(echo dyn)\\[\\e[0m\\] $ "',
        'PROMPT_COMMAND="echo -n prompt-hook-ran; history -a"',
        'set -o vi',
        'HISTCONTROL=ignoreboth',
        'alias ll="echo ll-alias"',
      ].join('\n'),
    });
    // Closing an SSH session disposes its driver: each extra session gets its own connection.
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, {
      kind: 'ssh',
      shell: '/bin/bash',
      env: { HOME: home },
    });
    const sRun = (command: string) => manager.execute({ command, session_id: s.id });
    expect((await sRun('echo one')).output).toBe('one');
    expect((await sRun('ll')).output).toBe('ll-alias');
    expect((await sRun('false')).exit_code).toBe(1);
    expect((await sRun('PROMPT_COMMAND="echo replaced"; echo two')).output).toBe('two');
    expect((await sRun('echo three')).output).toBe('three');
    await manager.closeSession(s.id);
  });

  it('works with POSIX sh (dash)', async () => {
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, { kind: 'ssh', shell: '/bin/sh' });
    const sRun = (command: string) => manager.execute({ command, session_id: s.id });
    expect((await sRun('echo dash')).output).toBe('dash');
    expect((await sRun('cd /tmp && false')).exit_code).toBe(1);
    expect((await sRun('pwd')).output).toBe('/tmp');
    expect((await sRun('cat <<EOF\nin heredoc\nEOF')).output).toBe('in heredoc');
    await manager.closeSession(s.id);
  });

  it('works with zsh', async (ctx) => {
    if (!remote.zsh) ctx.skip();
    const other = await connectTo(fx, sshd);
    const s = await manager.openSession(other.driver, { kind: 'ssh', shell: 'zsh' });
    const sRun = (command: string) => manager.execute({ command, session_id: s.id });
    expect((await sRun('echo $ZSH_NAME')).output).toBe('zsh');
    expect((await sRun('(exit 4)')).exit_code).toBe(4);
    await sRun('cd /tmp; export Z=1');
    expect((await sRun('echo $PWD $Z')).output).toBe('/tmp 1');
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
