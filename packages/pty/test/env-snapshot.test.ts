/**
 * The environment snapshot a session shell writes for isolated commands after each command's end, on real
 * shells on real pseudo-terminals: the end is reported first, so a snapshot that cannot finish delays
 * neither the command's result nor (beyond a bounded wait) an isolated command; and an isolated command
 * loads one snapshot whole, never one the shell is rewriting or could not finish.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { CommandResult, SessionManager } from '@conch/core';
import { snapshotFile } from '@conch/core/engine';
import { readToEnd, waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalTestEngine, startLocalEngine } from './helpers.js';

const shells = ['/bin/bash', ...(existsSync('/usr/bin/zsh') ? ['/usr/bin/zsh'] : []), '/bin/sh'];

let engine: LocalTestEngine;
let manager: SessionManager;
let work: string;

beforeAll(() => {
  // A short cap keeps the stuck-snapshot case quick; the waiting rule is the same as the default's.
  engine = startLocalEngine('conch-snapshot-test-', { writeDeadlineMs: 1500, snapshotWaitMs: 300 });
  ({ manager, work } = engine);
});

afterAll(() => engine.close());

const finished = (r: CommandResult) => readToEnd(manager, r);

/**
 * Sets the variables {@link SEEN} shows to `value`: in sort order (as `export -p` lists them) the first,
 * a long one, the last, so that a snapshot cut part-way has the first of one command and the last of
 * another.
 */
const setTo = (value: string) =>
  `export AAA_SNAP_A=${value} AAB_SNAP_M="$(head -c 50000 /dev/zero | tr '\\0' ${value[0]})" zzz_snap_z=${value}`;
const SEEN = 'echo "${AAA_SNAP_A-unset} ${zzz_snap_z-unset} ${#AAB_SNAP_M}"';

const hasStrace = spawnSync('strace', ['-V']).status === 0;

/** Reads what a non-blocking pipe holds now. */
function drain(fd: number): void {
  const buffer = Buffer.alloc(65536);
  for (;;) {
    try {
      if (readSync(fd, buffer) === 0) return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return;
      throw error;
    }
  }
}

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
    // Ctrl+C once sleep holds the terminal: a SIGINT the shell itself gets while it starts a job whose
    // child then lives on is dropped (bash and zsh wait for the child and see it was not interrupted).
    const proc = manager.getSession(s.session_id).proc!;
    await expect.poll(() => proc.foregroundProgram?.(), { timeout: 10_000 }).toBe('sleep');
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
    // A new session's first command snapshots into slot 1 (slot 0 holds the snapshot of its start-up).
    const slotFile = snapshotFile(session.envFile, 1);
    const shellPid = session.proc!.pid!;
    // That file is a full pipe: the shell's snapshot blocks in write() until someone reads it.
    execFileSync('mkfifo', ['-m', '600', slotFile]);
    const fd = openSync(slotFile, constants.O_RDWR | constants.O_NONBLOCK);
    try {
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
      await waitFor(() => holds(shellPid, slotFile));
      // The isolated command waits for the snapshot up to the cap, then starts with the last snapshot written
      // whole, the start-up's: as if the stuck one had never begun.
      const iso = await finished(
        await manager.execute({
          command: 'echo "${SNAP_STUCK-unset}"',
          session_id: s.session_id,
          background: true,
        }),
      );
      expect(iso).toMatchObject({ exit_code: 0, output: 'unset' });
      expect(holds(shellPid, slotFile)).toBe(true);
      // Once the pipe is read, the shell gets past its snapshot and goes on.
      await waitFor(() => {
        drain(fd);
        return !holds(shellPid, slotFile);
      });
      const next = await manager.execute({ command: 'echo "$SNAP_STUCK"', session_id: s.session_id });
      expect(next).toMatchObject({ status: 'completed', exit_code: 0, output: 'yes' });
      const after = await finished(
        await manager.execute({
          command: 'echo "${SNAP_STUCK-unset}"',
          session_id: s.session_id,
          background: true,
        }),
      );
      expect(after).toMatchObject({ exit_code: 0, output: 'yes' });
    } finally {
      closeSync(fd);
      await manager.closeSession(s.session_id);
    }
  });

  it('a snapshot the shell could not write whole is never loaded: an isolated command sees the one before', async () => {
    const s = await manager.createLocal({ shell });
    const run = (command: string, extra: Record<string, unknown> = {}) =>
      manager.execute({ command, session_id: s.session_id, ...extra });
    const seen = async () => (await finished(await run(SEEN, { background: true }))).output;
    await run(setTo('old'));
    expect(await seen()).toBe('old old 50000');
    // The next snapshot fails part-way, as on a full disk: this shell may write no file beyond a few KiB
    // (writes beyond fail with EFBIG, SIGXFSZ ignored), and the snapshot is larger.
    const failed = await run(`trap '' XFSZ; ulimit -S -f 4; ${setTo('new')}`);
    expect(failed).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(await seen()).toBe('old old 50000');
    // Once the shell can write again, its next snapshot is whole and loaded.
    await run('ulimit -S -f unlimited');
    expect(await seen()).toBe('new new 50000');
    await manager.closeSession(s.session_id);
  });

  it.skipIf(!hasStrace)(
    'an isolated command started while the shell rewrites its snapshot sees one snapshot whole',
    async () => {
      const s = await manager.createLocal({ shell });
      const session = manager.getSession(s.session_id);
      const shellPid = session.proc!.pid!;
      const run = (command: string, extra: Record<string, unknown> = {}) =>
        manager.execute({ command, session_id: s.session_id, ...extra });
      const seen = async () => (await finished(await run(SEEN, { background: true }))).output;
      await run(setTo('old'));
      expect(await seen()).toBe('old old 50000');
      // From now on the shell's second write to a snapshot file waits 3 s (strace delays it): its next
      // snapshot stops part-way, with the start of the file rewritten and the rest not yet.
      const files = [0, 1, 2, 3].map((slot) => snapshotFile(session.envFile, slot));
      const tracer = spawn(
        'strace',
        ['-p', String(shellPid), '-o', '/dev/null', '-e', 'trace=write']
          .concat(['-e', 'inject=write:delay_enter=3000000:when=2'])
          .concat(files.flatMap((file) => ['-P', file])),
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const gone = new Promise((resolve) => tracer.once('exit', resolve));
      try {
        let said = '';
        tracer.stderr.on('data', (chunk: Buffer) => {
          said += chunk.toString();
        });
        await waitFor(() => said.includes('attached'));
        expect(await run(setTo('new'))).toMatchObject({ status: 'completed', exit_code: 0 });
        await waitFor(() => files.some((file) => holds(shellPid, file)));
        // Started now, the isolated command loads the old snapshot or (had the shell finished) the new one,
        // whole either way: never the new start of the file with the old rest.
        expect(['old old 50000', 'new new 50000']).toContain(await seen());
        // The shell finishes its snapshot and goes on; its next one is loaded.
        expect(await run('true')).toMatchObject({ status: 'completed', exit_code: 0 });
        expect(await seen()).toBe('new new 50000');
      } finally {
        tracer.kill();
        await gone;
        await manager.closeSession(s.session_id);
      }
    },
    30_000,
  );

  it.skipIf(shell === '/bin/sh')(
    "Ctrl+C asked for before the shell has read the command's line interrupts the command",
    async () => {
      const s = await manager.createLocal({ shell });
      const run = (command: string, extra: Record<string, unknown> = {}) =>
        manager.execute({ command, session_id: s.session_id, ...extra });
      // A prompt hook that takes its time (a git prompt in a large repository, say): the shell reads the
      // next typed line only once it is done, here once the gate file exists.
      const gate = join(work, `gate-${s.session_id}`);
      const wait = `__snap_gate() { while [ ! -e '${gate}' ]; do sleep 0.05; done; }`;
      await run(
        shell.endsWith('zsh')
          ? `${wait}; precmd_functions+=(__snap_gate)`
          : `${wait}; PROMPT_COMMAND+=(__snap_gate)`,
      );
      // The command starts no program: the interrupt reaches the shell running it whenever it comes.
      const cut = await run('while :; do :; done; echo never', { pause_timeout: 0.2 });
      expect(cut.status).toBe('partial');
      // The key is asked for while the shell is still in its prompt hook, with the line unread.
      const interrupted = manager.sendControl({ command_id: cut.command_id, key: 'C-c' });
      writeFileSync(gate, '');
      await interrupted;
      const ended = await finished(cut);
      // The loop never ends by itself: it ended, so the key interrupted it. bash says 130; zsh says 130, or
      // 1 or 2 when the interrupt lands while its eval is still under way (as in any terminal).
      if (shell.endsWith('bash')) expect(ended.exit_code).toBe(130);
      else expect(ended.exit_code).toBeGreaterThan(0);
      expect(ended.output).not.toContain('never');
      const next = await run('echo next');
      expect(next).toMatchObject({ status: 'completed', exit_code: 0, output: 'next' });
      await manager.closeSession(s.session_id);
    },
    30_000,
  );
});
