/**
 * Local sessions against real shells on real pseudo-terminals, beyond the driver conformance suite
 * (test/conformance.test.ts, which runs prompts, full-screen programs, signals and kills for every driver):
 * rc files, other shells, and what an agent must never notice (leaked processes and fds).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionManager } from '@conch/core';
import {
  expectHostileBashrcSurvived,
  expectPosixShWorks,
  expectZshWorks,
  HOSTILE_BASHRC,
  waitFor,
} from '@conch/core/testing';
import { openFds, pidsWithEnv } from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapOrphans } from '../src/index.js';
import { type LocalTestEngine, startLocalEngine } from './helpers.js';

const hasZsh = existsSync('/usr/bin/zsh') || existsSync('/bin/zsh');

let engine: LocalTestEngine;
let manager: SessionManager;
let work: string;

beforeAll(() => {
  engine = startLocalEngine('conch-pty-test-', { writeDeadlineMs: 1500 });
  ({ manager, work } = engine);
});

afterAll(() => engine.close());

describe('shells and rc files', () => {
  it('survives a custom PS1, PROMPT_COMMAND and vi mode in .bashrc', async () => {
    const home = join(work, 'home-rc');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.bashrc'), HOSTILE_BASHRC);
    const s = await manager.createLocal({ env: { HOME: home } });
    await expectHostileBashrcSurvived((command) => manager.execute({ command, session_id: s.session_id }));
    await manager.closeSession(s.session_id);
  });

  it('works with POSIX sh (dash)', async () => {
    const s = await manager.createLocal({ shell: '/bin/sh' });
    await expectPosixShWorks((command) => manager.execute({ command, session_id: s.session_id }));
    await manager.closeSession(s.session_id);
  });

  it.skipIf(!hasZsh)('works with zsh', async () => {
    const s = await manager.createLocal({ shell: 'zsh' });
    const run = (command: string) => manager.execute({ command, session_id: s.session_id });
    await expectZshWorks(run);
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
