/**
 * Local sessions against real shells on real pseudo-terminals, beyond the driver conformance suite
 * (test/conformance.test.ts, which runs prompts, full-screen programs, signals and kills for every driver):
 * rc files, other shells, and what an agent must never notice (leaked processes and fds).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRealClock, SessionManager } from '@conch/core';
import { waitFor } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { openFds, pidsWithEnv } from '@conch/node/testing';
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
    const fdsBefore = openFds().length;
    const s = await manager.createLocal();
    await manager.execute({ command: 'sleep 100 &', session_id: s.session_id });
    // An escaped process: double-forked into its own session, reparented away from the shell.
    await manager.execute({
      command: '(setsid nohup sleep 101 >/dev/null 2>&1 &)',
      session_id: s.session_id,
    });
    const bg = await manager.execute({ command: 'sleep 200', session_id: s.session_id, background: true });
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', s.session_id).length >= 4);
    const closed = await manager.closeSession(s.session_id);
    expect(closed.killed_command_ids).toContain(bg.command_id);
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', s.session_id).length === 0);
    await waitFor(() => openFds().length <= fdsBefore);
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
    await waitFor(() => pidsWithEnv('CONCH_OWNER', tag).filter((p) => p !== child.pid).length >= 3);
    // Every orphan signalled is counted (other tests' orphans on this machine may add to it).
    const reaped = await reapOrphans();
    expect(reaped).toBeGreaterThanOrEqual(3);
    await waitFor(() => pidsWithEnv('CONCH_OWNER', tag).length === 0);
  });

  it('when the server is SIGKILLed, its shells and their jobs die with it', async () => {
    // A stand-in server process: opens a session with a job running, prints the shell's pid, then waits.
    const fixture = join(import.meta.dirname, 'fixtures', 'server-that-dies.mjs');
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
    const { sessionId } = JSON.parse(line) as { sessionId: string };
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', sessionId).length >= 2);
    child.kill('SIGKILL');
    await waitFor(() => pidsWithEnv('CONCH_SESSION_ID', sessionId).length === 0);
  });
});
