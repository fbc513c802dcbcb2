/**
 * Reliability: faults injected into the built server behind each of its doors (stdio, the daemon's socket,
 * the relay: see targets.ts), each followed by proof that the server and its other sessions go on as
 * documented — SIGKILL of a session shell, of a background command's
 * process group and of the server itself (the restart leaves no orphans and no private files), a terminal
 * that stops reading its input, a 10 MB single line, binary output, invalid UTF-8 and a full spill
 * directory. Each survived fault is counted into `.reliability/faults.json`.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import {
  isAlive,
  pidsWithEnv,
  processEnvValue,
  processTree,
  writeReliabilityReport,
} from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';
import { TARGETS } from './targets.js';

let h: ServerHandle;
/** A session that must stay unaffected by every fault. */
let witness: string;
let survived = 0;

afterAll(() => {
  writeReliabilityReport('faults', { faults: survived });
});

/** Reads until the command completes. */
async function finish(r: CommandResult, server = h): Promise<CommandResult> {
  let out = r;
  while (out.status !== 'completed')
    out = await server.ok<CommandResult>('read_output', { command_id: r.command_id, total_timeout: 30 });
  return out;
}

/** The server still answers and the witness session still runs commands. */
async function stillServing(server = h, session = witness): Promise<void> {
  const r = await server.exec('echo alive', { session_id: session });
  expect(r.status).toBe('completed');
  expect(r.output).toBe('alive');
  expect(isAlive(server.pid)).toBe(true);
}

describe.each(TARGETS)('faults the server survives (%s)', (target) => {
  beforeAll(async () => {
    h = await startServer({ target });
    witness = (await h.ok<{ session_id: string }>('create_local', {})).session_id;
  });
  afterAll(async () => {
    await h?.close();
  });

  test('SIGKILL of a session shell: the session says so, a new command gets a new shell', async () => {
    await h.exec('echo first');
    const shell = (
      await h.ok<{ sessions: { session_id: string; pid?: number }[] }>('list_sessions')
    ).sessions.find((s) => s.session_id === 'default')?.pid;
    expect(shell).toBeGreaterThan(0);
    process.kill(shell!, 'SIGKILL');
    await waitFor(() => !isAlive(shell!), { what: 'the shell to die' });
    // A command sent before the engine saw the death reports the shell's end (SIGKILL) instead of running.
    let next = await h.exec('echo again');
    if (next.session_ended) {
      expect(next.signal).toBe('SIGKILL');
      next = await h.exec('echo again');
    }
    expect(next.status).toBe('completed');
    expect(next.output).toBe('again');
    expect(next.new_shell).toBe(true);
    await stillServing();
    survived++;
  });

  test("SIGKILL of a background command's process group: it ends killed by SIGKILL", async () => {
    const bg = await h.exec('sleep 300', { background: true, session_id: witness });
    const row = (
      await h.ok<{ processes: { command_id: string; pid: number | null; pgid?: number }[] }>(
        'list_processes',
        {
          filter: bg.command_id,
        },
      )
    ).processes[0];
    const group = row?.pgid ?? row?.pid;
    expect(group).toBeGreaterThan(0);
    process.kill(-group!, 'SIGKILL');
    const done = await finish(bg);
    expect(done.state === 'killed' || done.signal === 'SIGKILL' || done.exit_code === 137).toBe(true);
    expect(pidsWithEnv('CONCH_COMMAND_ID', bg.command_id)).toEqual([]);
    await stillServing();
    survived++;
  });

  test('a terminal that stops reading its input: the write fails at its deadline, the kill works', async () => {
    const session = (await h.ok<{ session_id: string }>('create_local', {})).session_id;
    // Raw mode without reading: the terminal's input buffer fills and further writes block.
    const stuck = await h.exec('stty raw -echo; sleep 300', { session_id: session, pause_timeout: 0.3 });
    expect(stuck.status).toBe('partial');
    // More than the terminal's input buffer holds, to a program that never reads it.
    const r = await h.call('respond', { command_id: stuck.command_id, text: 'y'.repeat(200_000) });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('WRITE_TIMEOUT');
    await stillServing();
    const killed = await h.ok<{ result: string }>('kill_process', {
      command_id: stuck.command_id,
      grace_s: 1,
    });
    expect(killed.result).toBe('killed');
    expect(pidsWithEnv('CONCH_COMMAND_ID', stuck.command_id)).toEqual([]);
    const closed = await h.ok<{ session_id: string }>('close_session', { session_id: session });
    expect(closed.session_id).toBe(session);
    expect(pidsWithEnv('CONCH_SESSION_ID', session)).toEqual([]);
    await stillServing();
    survived++;
  });

  test('a 10 MB single line: every byte counted, the line split at 1 MiB, the server answers', async () => {
    const r = await finish(
      await h.exec("head -c 10000000 /dev/zero | tr '\\0' a; echo", { total_timeout: 60, pause_timeout: 30 }),
    );
    expect(r.exit_code).toBe(0);
    expect(r.output_info?.bytes_total).toBeGreaterThanOrEqual(10_000_000);
    expect(r.output_info?.truncated).toBe(true);
    const last = await h.ok<CommandResult>('read_output', { command_id: r.command_id, offset: -1 });
    expect(last.output).toMatch(/\naaaaaaaaaa+$/);
    await stillServing();
    survived++;
  });

  test('binary output: a valid result, the session goes on', async () => {
    const r = await finish(
      await h.exec('head -c 200000 /dev/urandom; echo; echo after-binary', { total_timeout: 60 }),
    );
    expect(r.exit_code).toBe(0);
    expect(r.output.endsWith('after-binary')).toBe(true);
    expect((await h.exec('echo clean')).output).toBe('clean');
    await stillServing();
    survived++;
  });

  test('invalid UTF-8: replaced, never a broken result', async () => {
    const r = await h.exec("printf 'A\\377\\376B\\303(C\\355\\240\\200D\\n'");
    expect(r.exit_code).toBe(0);
    expect(r.output).toMatch(/^A\uFFFD+B\uFFFD+\(C\uFFFD+D$/);
    expect(/\p{Cs}/u.test(r.output)).toBe(false);
    await stillServing();
    survived++;
  });
});

describe.each(TARGETS)('a full spill directory (%s)', (target) => {
  // A 64 KiB tmpfs in a private mount namespace of the server (root can write to any read-only directory).
  const mount = mkdtempSync(join(tmpdir(), 'full-spill-'));
  afterAll(() => rmSync(mount, { recursive: true, force: true }));

  // Needs mount namespaces (root with CAP_SYS_ADMIN, as in CI); elsewhere the case is skipped, and says so.
  const canMount =
    spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs '${mount}'`]).status === 0;

  test.skipIf(!canMount)(
    'output beyond what the disk holds: the command completes, the server keeps serving',
    async () => {
      const server = await startServer({
        wrapper: [
          'unshare',
          '-m',
          'sh',
          '-c',
          `mount -t tmpfs -o size=64k tmpfs '${mount}' && exec "$0" "$@"`,
        ],
        args: ['--spill-dir', join(mount, 'spill')],
        target,
      });
      try {
        const big = await finish(
          await server.exec('seq 1 300000', { total_timeout: 60, pause_timeout: 30 }),
          server,
        );
        expect(big.exit_code).toBe(0);
        expect(big.output_info?.lines_total).toBe(300000);
        // The lines held in memory still page exactly.
        const tail = await server.ok<CommandResult>('read_output', {
          command_id: big.command_id,
          offset: -1,
        });
        expect(tail.output.endsWith('300000')).toBe(true);
        const again = await server.exec('seq 1 200000 | tail -n 1', { total_timeout: 60 });
        expect(again.output).toBe('200000');
        const s = (await server.ok<{ session_id: string }>('create_local', {})).session_id;
        await stillServing(server, s);
      } finally {
        await server.close();
      }
      survived++;
    },
  );
});

describe.each(TARGETS)('SIGKILL of the server (%s)', (target) => {
  const parent = mkdtempSync(join(tmpdir(), 'faults-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  test('the restart leaves no orphans and no private files', async () => {
    const env = { TMPDIR: parent };
    const victim = await startServer({ env, target });
    await victim.exec('export SOME_TOKEN=t-1; seq 1 100000');
    const bg = await victim.exec("setsid sh -c 'sleep 420 &'; sleep 421", { background: true });
    await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', bg.command_id).length >= 2, {
      what: 'the background command and its escaped process',
    });
    const owner = processEnvValue(processTree(victim.pid)[1]!, 'CONCH_OWNER');
    expect(owner).toBeDefined();
    const victimDirs = readdirSync(parent).filter((n) => n.startsWith('conch-'));
    expect(victimDirs.length).toBeGreaterThan(0);
    process.kill(victim.pid, 'SIGKILL');
    await waitFor(() => !isAlive(victim.pid), { what: 'the server to die' });
    await victim.close().catch(() => {});

    const next = await startServer({ env, target });
    try {
      await next.exec('echo restarted');
      // The setsid escaped process outlived its shell; the restart reaped it with the rest.
      await waitFor(() => pidsWithEnv('CONCH_OWNER', owner).length === 0, {
        what: 'no process of the dead server',
      });
      const dirs = readdirSync(parent);
      for (const d of victimDirs) expect(dirs, `the dead server's ${d}`).not.toContain(d);
      await stillServing(next, (await next.ok<{ session_id: string }>('create_local', {})).session_id);
    } finally {
      await next.close();
    }
    expect(readdirSync(parent).filter((n) => n.startsWith('conch-'))).toEqual([]);
    survived++;
  });
});
