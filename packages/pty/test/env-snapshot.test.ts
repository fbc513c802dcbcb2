/**
 * The environment snapshot a session shell writes for isolated commands after each command's end, on real
 * shells on real pseudo-terminals: the end is reported first, so a snapshot that cannot finish delays
 * neither the command's result nor (beyond a bounded wait) an isolated command.
 */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CommandResult, createRealClock, SessionManager } from '@conch/core';
import { readToEnd, waitFor } from '@conch/core/testing';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

const shells = ['/bin/bash', ...(existsSync('/usr/bin/zsh') ? ['/usr/bin/zsh'] : []), '/bin/sh'];

let driver: LocalDriver;
let manager: SessionManager;
let spill: FileSpillStore;
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-snapshot-test-'));
  driver = createLocalDriver();
  spill = new FileSpillStore({});
  manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    screen: createXtermScreen,
    spill,
    // A short cap keeps the stuck-snapshot case quick; the waiting rule is the same as the default's.
    defaults: { cwd: work, writeDeadlineMs: 1500, snapshotWaitMs: 300 },
  });
});

afterAll(async () => {
  await manager.shutdown();
  await driver.dispose();
  spill.dispose(true);
  rmSync(work, { recursive: true, force: true });
});

const finished = (r: CommandResult) => readToEnd(manager, r);

/** True when process `pid` has `path` open. */
function holds(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

describe.each(shells)('environment snapshot (%s)', (shell) => {
  it('an isolated command started right after export/unset sees the change', async () => {
    const s = await manager.createLocal({ shell });
    const run = (command: string, extra: Record<string, unknown> = {}) =>
      manager.execute({ command, session_id: s.session_id, ...extra });
    for (let round = 0; round < 5; round++) {
      await run(`export SNAP_FOO=bar${round}`);
      const seen = await finished(await run('echo "${SNAP_FOO-unset}"', { background: true }));
      expect(seen.output).toBe(`bar${round}`);
      await run('unset SNAP_FOO');
      const gone = await finished(await run('echo "${SNAP_FOO-unset}"', { background: true }));
      expect(gone.output).toBe('unset');
    }
    await manager.closeSession(s.session_id);
  });

  it.skipIf(shell === '/bin/sh')('a line cut short by Ctrl+C snapshots from the prompt hook', async () => {
    const s = await manager.createLocal({ shell });
    const run = (command: string, extra: Record<string, unknown> = {}) =>
      manager.execute({ command, session_id: s.session_id, ...extra });
    const cut = await run('export SNAP_CUT=yes; sleep 20; echo never', { pause_timeout: 0.3 });
    expect(cut.status).toBe('partial');
    await manager.sendControl({ command_id: cut.command_id, key: 'C-c' });
    const ended = await finished(cut);
    expect(ended.exit_code).toBe(130);
    expect(ended.output).not.toContain('never');
    const seen = await finished(await run('echo "${SNAP_CUT-unset}"', { background: true }));
    expect(seen.output).toBe('yes');
    await manager.closeSession(s.session_id);
  });

  it('a snapshot that cannot finish delays neither the result nor, beyond the cap, an isolated command', async () => {
    const s = await manager.createLocal({ shell });
    const session = manager.getSession(s.session_id);
    const envFile = session.envFile;
    const shellPid = session.proc!.pid;
    // The env file becomes a full pipe: the shell's snapshot blocks in write() until someone reads it.
    rmSync(envFile);
    execFileSync('mkfifo', ['-m', '600', envFile]);
    const fd = openSync(envFile, constants.O_RDWR | constants.O_NONBLOCK);
    let closed = false;
    try {
      // Newlines only: whoever sources the pipe later reads empty lines, then the snapshot.
      for (const size of [4096, 1]) {
        const chunk = Buffer.alloc(size, '\n');
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
            throw error;
          }
        }
      }
      const r = await manager.execute({
        command: 'export SNAP_STUCK=yes; (exit 3)',
        session_id: s.session_id,
        pause_timeout: 3,
      });
      expect(r).toMatchObject({ status: 'completed', exit_code: 3 });
      // Once the shell holds the pipe (blocked writing), the test lets go of its end: the filler stays.
      await waitFor(() => holds(shellPid, envFile));
      closeSync(fd);
      closed = true;
      // The isolated command waits for the snapshot up to the cap, then starts and sources the pipe: it
      // reads the filler, which unblocks the shell, and then the snapshot itself.
      const iso = await finished(
        await manager.execute({
          command: 'echo "${SNAP_STUCK-unset}"',
          session_id: s.session_id,
          background: true,
        }),
      );
      expect(iso).toMatchObject({ exit_code: 0, output: 'yes' });
      // The shell got past its snapshot and goes on.
      const next = await manager.execute({ command: 'echo "$SNAP_STUCK"', session_id: s.session_id });
      expect(next).toMatchObject({ status: 'completed', exit_code: 0, output: 'yes' });
    } finally {
      if (!closed) closeSync(fd);
      await manager.closeSession(s.session_id);
    }
  });
});
