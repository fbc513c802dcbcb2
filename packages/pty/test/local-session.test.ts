/**
 * Local sessions against real shells on real pseudo-terminals: what an agent notices (prompts, full-screen
 * programs, rc files, other shells), and what it must never notice (leaked processes and fds).
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRealClock, SessionManager } from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { countMarked, pidsWithEnv } from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver, reapOrphans } from '../src/index.js';

const hasZsh = existsSync('/usr/bin/zsh') || existsSync('/bin/zsh');

let driver: LocalDriver;
let manager: SessionManager;
let spill: FileSpillStore;
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-pty-test-'));
  driver = createLocalDriver();
  spill = new FileSpillStore({});
  manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    screen: createXtermScreen,
    spill,
    defaults: { cwd: work, writeDeadlineMs: 1500 },
  });
});

afterAll(async () => {
  await manager.shutdown();
  await driver.dispose();
  spill.dispose(true);
  rmSync(work, { recursive: true, force: true });
});

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('prompts', () => {
  it('reports python input() as awaiting_input and finishes on respond', async () => {
    const r = await manager.execute({ command: `python3 -c 'n = input("Your name: "); print("hello", n)'` });
    expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', prompt: { kind: 'text' } });
    expect(r.prompt?.text).toContain('Your name:');
    const done = await manager.respond({ command_id: r.command_id, text: 'Ada' });
    expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(done.output).toContain('hello Ada');
  });

  it('reports a REPL prompt and its answers', async () => {
    const r = await manager.execute({ command: 'python3 -q' });
    expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'repl' } });
    const two = await manager.respond({ command_id: r.command_id, text: '6*7' });
    expect(two.output).toContain('42');
    expect(two.reason).toBe('awaiting_input');
    const end = await manager.sendControl({ command_id: r.command_id, key: 'ctrl+d' });
    expect(end).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('reports a yes/no question', async () => {
    const r = await manager.execute({ command: `read -p 'Overwrite file? [y/N] ' a; echo "answer=$a"` });
    expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'yes_no' } });
    expect((await manager.respond({ command_id: r.command_id, text: 'y' })).output).toContain('answer=y');
  });

  it('does not take a sleeping program with a prompt-looking line for a prompt', async () => {
    const r = await manager.execute({
      command: `printf 'Continue? [Y/n] '; sleep 1.5; echo done`,
      pause_timeout: 5,
    });
    expect(r).toMatchObject({ status: 'completed', reason: 'exited' });
  });
});

describe('full-screen programs', () => {
  it('edits and saves a file in vim, with the screen view showing vim', async () => {
    const file = join(work, 'vim-test.txt');
    const r = await manager.execute({ command: `vim -u NONE -N ${file}`, pause_timeout: 3 });
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
    expect(readFileSync(file, 'utf8')).toBe('hello from conch\n');
  });

  it('reports less as a pager prompt and quits on q; arrows follow DECCKM', async () => {
    writeFileSync(join(work, 'long.txt'), Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join('\n'));
    const r = await manager.execute({ command: 'less long.txt' });
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
});

describe('signals and processes', () => {
  it('Ctrl+C ends a foreground loop with 130 and the shell keeps working', async () => {
    const r = await manager.execute({
      command: 'while true; do echo spin; sleep 0.1; done',
      total_timeout: 0.5,
    });
    expect(r.status).toBe('partial');
    // A loop of builtins and short children: a Ctrl+C that lands while bash forks the next child can be
    // lost inside bash itself (a person would press it again), so allow up to three presses.
    let c = await manager.sendControl({
      command_id: r.command_id,
      key: '^C',
      pause_timeout: 2,
      total_timeout: 2,
    });
    for (let press = 1; press < 3 && c.status !== 'completed'; press++) {
      c = await manager.sendControl({
        command_id: r.command_id,
        key: '^C',
        pause_timeout: 2,
        total_timeout: 2,
      });
    }
    expect(c).toMatchObject({ status: 'completed', exit_code: 130, signal: 'SIGINT' });
    expect((await manager.execute({ command: 'echo alive' })).output).toBe('alive');
  });

  it('kill_process on a foreground job kills the job, not the shell', async () => {
    const r = await manager.execute({
      command: 'sleep 300 & sleep 301; echo not-reached',
      pause_timeout: 0.3,
    });
    expect(r.status).toBe('partial');
    await until(() => (countMarked(r.command_id) >= 2 ? true : undefined));
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
    expect(k.result).toBe('killed');
    expect(countMarked(r.command_id)).toBe(0);
    const after = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
    expect(after).toMatchObject({ status: 'completed', state: 'killed' });
    expect((await manager.execute({ command: 'echo shell-still-here' })).output).toBe('shell-still-here');
  });

  it('kill_process escalates to SIGKILL for a program that ignores SIGTERM', async () => {
    const r = await manager.execute({ command: `trap '' TERM; echo armed; sleep 300`, background: true });
    await until(() => (countMarked(r.command_id) >= 2 ? true : undefined));
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 0.3 });
    expect(k).toMatchObject({ result: 'killed', survivors: [] });
    expect(countMarked(r.command_id)).toBe(0);
  });

  it('a write to a program that stops reading times out instead of blocking', async () => {
    // Raw mode and no reader: the terminal's input queue fills and stays full. (Its own session: raw mode
    // outlives the command, as in any terminal.)
    const s = await manager.createLocal();
    const r = await manager.execute({
      command: 'stty raw -echo; sleep 30',
      pause_timeout: 0.3,
      session_id: s.session_id,
    });
    const big = 'x'.repeat(200_000);
    const started = Date.now();
    await expect(
      manager.respond({ command_id: r.command_id, text: big, enter: false }),
    ).rejects.toMatchObject({
      code: 'WRITE_TIMEOUT',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
    expect(k.result).toBe('killed');
    await manager.closeSession(s.session_id);
  });
});

describe('shells and rc files', () => {
  it('survives a custom PS1, PROMPT_COMMAND and vi mode in .bashrc', async () => {
    const home = join(work, 'home-rc');
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, '.bashrc'),
      [
        'PS1="\\[\\e[1;32m\\]\\u@\\h \\w \\$(echo dyn)\\[\\e[0m\\] $ "',
        'PROMPT_COMMAND="echo -n prompt-hook-ran; history -a"',
        'set -o vi',
        'HISTCONTROL=ignoreboth',
        'alias ll="echo ll-alias"',
      ].join('\n'),
    );
    const s = await manager.createLocal({ env: { HOME: home } });
    const run = (command: string) => manager.execute({ command, session_id: s.session_id });
    expect((await run('echo one')).output).toBe('one');
    expect((await run('ll')).output).toBe('ll-alias');
    expect((await run('false')).exit_code).toBe(1);
    const r = await run('PROMPT_COMMAND="echo replaced"; echo two');
    expect(r.output).toBe('two');
    expect((await run('echo three')).output).toBe('three');
    await manager.closeSession(s.session_id);
  });

  it('works with POSIX sh (dash)', async () => {
    const s = await manager.createLocal({ shell: '/bin/sh' });
    const run = (command: string) => manager.execute({ command, session_id: s.session_id });
    expect((await run('echo dash')).output).toBe('dash');
    expect((await run('cd /tmp && false')).exit_code).toBe(1);
    expect((await run('pwd')).output).toBe('/tmp');
    expect((await run('cat <<EOF\nin heredoc\nEOF')).output).toBe('in heredoc');
    await manager.closeSession(s.session_id);
  });

  it.skipIf(!hasZsh)('works with zsh', async () => {
    const s = await manager.createLocal({ shell: 'zsh' });
    const run = (command: string) => manager.execute({ command, session_id: s.session_id });
    expect((await run('echo $ZSH_NAME')).output).toBe('zsh');
    expect((await run('(exit 4)')).exit_code).toBe(4);
    await run('cd /tmp; export Z=1');
    expect((await run('echo $PWD $Z')).output).toBe('/tmp 1');
    const iso = await run('sleep 5');
    void iso;
    await manager.closeSession(s.session_id);
  });
});

describe('cleanup', () => {
  it('closing a session leaves no process and no terminal behind', async () => {
    const fdsBefore = readdirSync('/proc/self/fd').length;
    const s = await manager.createLocal();
    await manager.execute({ command: 'sleep 100 &', session_id: s.session_id });
    // An escapee: double-forked into its own session, reparented away from the shell.
    await manager.execute({
      command: '(setsid nohup sleep 101 >/dev/null 2>&1 &)',
      session_id: s.session_id,
    });
    const bg = await manager.execute({ command: 'sleep 200', session_id: s.session_id, background: true });
    await until(() => (pidsWithEnv('CONCH_SESSION_ID', s.session_id).length >= 4 ? true : undefined));
    const closed = await manager.closeSession(s.session_id);
    expect(closed.killed_command_ids).toContain(bg.command_id);
    await until(() => (pidsWithEnv('CONCH_SESSION_ID', s.session_id).length === 0 ? true : undefined));
    await until(() => (readdirSync('/proc/self/fd').length <= fdsBefore ? true : undefined));
  });

  it('reaps processes a SIGKILLed server left behind', async () => {
    // A stand-in "server": a node process that starts a nohup'd grandchild tagged as its own, then dies.
    const tag = 'conch-999999-deadbeef';
    const child = spawn(
      'bash',
      ['-c', 'for i in 1 2 3; do nohup sleep 300 >/dev/null 2>&1 & done; echo $!'],
      { env: { ...process.env, CONCH_OWNER: tag }, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const pid = Number(await new Promise<string>((r) => child.stdout.once('data', (d) => r(String(d)))));
    expect(pidsWithEnv('CONCH_OWNER', tag)).toContain(pid);
    await until(() =>
      pidsWithEnv('CONCH_OWNER', tag).filter((p) => p !== child.pid).length >= 3 ? true : undefined,
    );
    // Every orphan signalled is counted (other tests' orphans on this machine may add to it).
    const reaped = await reapOrphans();
    expect(reaped).toBeGreaterThanOrEqual(3);
    await until(() => (pidsWithEnv('CONCH_OWNER', tag).length === 0 ? true : undefined));
  });

  it('when the server is SIGKILLed, its shells and their jobs die with it', async () => {
    // A stand-in server process: opens a session with a job running, prints the shell's pid, then waits.
    const fixture = join(import.meta.dirname, 'fixtures', 'server-that-dies.mjs');
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
    const { sessionId } = JSON.parse(line) as { sessionId: string };
    await until(() => (pidsWithEnv('CONCH_SESSION_ID', sessionId).length >= 2 ? true : undefined));
    child.kill('SIGKILL');
    await until(() => (pidsWithEnv('CONCH_SESSION_ID', sessionId).length === 0 ? true : undefined));
  });
});

describe('killing foreground loops', () => {
  it('kill_process on a shell loop ends the loop and frees the session', async () => {
    const r = await manager.execute({
      command: 'while true; do echo loop; sleep 0.2; done',
      total_timeout: 0.5,
    });
    expect(r.status).toBe('partial');
    const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
    expect(k.result).toBe('killed');
    const after = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
    expect(after.status).toBe('completed');
    const next = await manager.execute({ command: 'cd / && echo free' });
    expect(next).toMatchObject({ output: 'free', cwd: '/' });
    expect(next.isolated).toBeUndefined();
    await manager.execute({ command: `cd ${work}` });
  });
});
