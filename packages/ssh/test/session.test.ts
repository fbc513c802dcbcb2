/**
 * The local-session behaviours, over SSH: prompts (with the remote terminal-read probe), full-screen
 * programs, Ctrl+C, killing foreground jobs and stubborn programs, rc files, other shells, and cleanup.
 * The cases mirror packages/pty/test/local-session.test.ts.
 */
import { createRealClock, SessionManager } from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { createSshFixture, pidsWithEnv, type Sshd, type SshFixture, until } from '@conch/ssh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SshConnection } from '../src/index.js';
import { connectTo, countMarkedRemote } from './helpers.js';

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

describe('prompts', () => {
  it('reports python input() as awaiting_input and finishes on respond', async (ctx) => {
    if (!remote.python) ctx.skip();
    const r = await run(`python3 -c 'n = input("Your name: "); print("hello", n)'`);
    expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', prompt: { kind: 'text' } });
    expect(r.prompt?.text).toContain('Your name:');
    const done = await manager.respond({ command_id: r.command_id, text: 'Ada' });
    expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(done.output).toContain('hello Ada');
  });

  it('reports a REPL prompt and its answers', async (ctx) => {
    if (!remote.python) ctx.skip();
    const r = await run('python3 -q');
    expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'repl' } });
    const two = await manager.respond({ command_id: r.command_id, text: '6*7' });
    expect(two.output).toContain('42');
    expect(two.reason).toBe('awaiting_input');
    const end = await manager.sendControl({ command_id: r.command_id, key: 'ctrl+d' });
    expect(end).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('reports a yes/no question', async () => {
    const r = await run(`read -p 'Overwrite file? [y/N] ' a; echo "answer=$a"`);
    expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'yes_no' } });
    expect((await manager.respond({ command_id: r.command_id, text: 'y' })).output).toContain('answer=y');
  });

  it('does not take a sleeping program with a prompt-looking line for a prompt', async () => {
    const r = await run(`printf 'Continue? [Y/n] '; sleep 1.5; echo done`, { pause_timeout: 5 });
    expect(r).toMatchObject({ status: 'completed', reason: 'exited' });
  });
});

describe('full-screen programs', () => {
  it('edits and saves a file in vim, with the screen view showing vim', async (ctx) => {
    if (!remote.vim) ctx.skip();
    const file = `${work}/vim-test.txt`;
    const r = await run(`vim -u NONE -N ${file}`, { pause_timeout: 3 });
    expect(r.status).toBe('partial');
    const screen = await manager.readOutput({ command_id: r.command_id, view: 'screen', pause_timeout: 0 });
    expect(screen.screen?.alt_screen).toBe(true);
    expect(screen.screen?.rows.some((row) => row.includes('vim-test.txt'))).toBe(true);
    await manager.respond({
      command_id: r.command_id,
      text: 'ihello from conch',
      enter: false,
      pause_timeout: 0.5,
    });
    await manager.sendControl({ command_id: r.command_id, key: 'esc', pause_timeout: 0.5 });
    const typed = await manager.readOutput({ command_id: r.command_id, view: 'screen', pause_timeout: 0 });
    expect(typed.screen?.rows[0]).toBe('hello from conch');
    const saved = await manager.respond({ command_id: r.command_id, text: ':wq' });
    expect(saved).toMatchObject({ status: 'completed', exit_code: 0 });
    expect((await conn.driver.exec(`cat ${file}`)).stdout).toBe('hello from conch\n');
  });

  it('reports less as a pager prompt and quits on q; arrows follow DECCKM', async (ctx) => {
    if (!remote.less) ctx.skip();
    await run('seq -f "line %g" 1 500 > long.txt');
    const r = await run('less long.txt');
    expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', prompt: { kind: 'pager' } });
    const down = await manager.sendControl({
      command_id: r.command_id,
      key: ['down', 'down'],
      pause_timeout: 1,
    });
    expect(down.prompt?.kind).toBe('pager');
    const screen = await manager.readOutput({ command_id: r.command_id, view: 'screen', pause_timeout: 0 });
    expect(screen.screen?.rows[0]).toBe('line 3');
    const q = await manager.sendControl({ command_id: r.command_id, key: 'q' });
    expect(q).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('follows a resize of the terminal', async () => {
    const session = manager.getSession(sid);
    session.resize(132, 40);
    expect((await run('stty size')).output).toBe('40 132');
  });
});

describe('signals and processes', () => {
  it('Ctrl+C ends a foreground loop with 130 and the shell keeps working', async () => {
    const r = await run('while true; do echo spin; sleep 0.1; done', { total_timeout: 0.5 });
    expect(r.status).toBe('partial');
    const c = await manager.sendControl({ command_id: r.command_id, key: '^C' });
    expect(c).toMatchObject({ status: 'completed', exit_code: 130, signal: 'SIGINT' });
    expect((await run('echo alive')).output).toBe('alive');
  });

  it('kill_process on a foreground job kills the job, not the shell', async () => {
    const r = await run('sleep 300 & sleep 301; echo not-reached', { pause_timeout: 0.3 });
    expect(r.status).toBe('partial');
    await until(async () => ((await countMarkedRemote(conn.driver, r.command_id)) >= 2 ? true : undefined));
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
    expect(k.result).toBe('killed');
    expect(await countMarkedRemote(conn.driver, r.command_id)).toBe(0);
    const after = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
    expect(after).toMatchObject({ status: 'completed', state: 'killed' });
    expect((await run('echo shell-still-here')).output).toBe('shell-still-here');
  });

  it('kill_process escalates to SIGKILL for a program that ignores SIGTERM', async () => {
    const r = await run(`trap '' TERM; echo armed; sleep 300`, { background: true });
    await until(async () => ((await countMarkedRemote(conn.driver, r.command_id)) >= 2 ? true : undefined));
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 0.3 });
    expect(k).toMatchObject({ result: 'killed', survivors: [] });
    expect(await countMarkedRemote(conn.driver, r.command_id)).toBe(0);
  });

  it('reports the exit signal of a background command', async () => {
    const r = await run('kill -TERM $$', { background: true });
    const done = await manager.readOutput({ command_id: r.command_id, pause_timeout: 5 });
    expect(done).toMatchObject({ status: 'completed', state: 'killed', signal: 'SIGTERM' });
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
    await until(() => (pidsWithEnv('CONCH_SESSION_ID', s.id).length >= 4 ? true : undefined));
    const closed = await manager.closeSession(s.id);
    expect(closed.killed_command_ids).toContain(bg.command_id);
    await until(
      () => (pidsWithEnv('CONCH_SESSION_ID', s.id).length === 0 ? true : undefined),
      10_000,
      'remote processes to go',
    );
    expect(other.driver.liveCount()).toBe(0);
    expect(other.driver.connectionCount()).toBe(0);
  });
});
