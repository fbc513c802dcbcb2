/**
 * Server instances on one machine, over the built binary: a server started inside another server's session
 * (it inherits that server's owner tag) keeps its shells and commands when a third server starts and
 * reaps orphans; a SIGKILLed server's private directories (environment snapshot, spill logs) are removed by
 * the next start, and only those whose instance is gone, and so are the processes it left (found by its
 * owner tag, with the process facts in use: `/proc`, or `ps` with CONCH_PROCESS_FACTS=ps).
 */

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { pidsWithEnv, processEnvValue, processTree } from '@conch/node/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { BIN, type CommandResult, descendants, isAlive, startServer } from './harness.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'client-that-dies.mjs');

/** Directories a server created under `parent` (driver scripts and snapshots, spill logs). */
const conchDirs = (parent: string) =>
  readdirSync(parent)
    .filter((n) => n.startsWith('conch-'))
    .sort();

describe('a server started inside another server', () => {
  test('keeps its live shells and commands when another server starts', async () => {
    const outer = await startServer();
    try {
      // The nested server runs as a background command of the outer one: its environment carries the outer
      // server's CONCH_OWNER and CONCH_COMMAND_ID, as it would for someone running conch inside conch.
      const bg = await outer.exec(
        `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)} ${JSON.stringify(BIN)}`,
        {
          background: true,
        },
      );
      const started = await waitFor(
        async () => {
          const r = await outer.ok<CommandResult>('read_output', {
            command_id: bg.command_id,
            pause_timeout: 0.5,
          });
          const line = r.output.split('\n').find((l) => l.startsWith('{"serverPid"'));
          return line ? (JSON.parse(line) as { serverPid: number }).serverPid : undefined;
        },
        { what: 'the nested server to run a command' },
      );
      const nested = await waitFor(
        () => (descendants(started).length >= 2 ? descendants(started) : undefined),
        {
          what: "the nested server's shell and sleep",
        },
      );
      expect(processEnvValue(started, 'CONCH_OWNER')).toBeDefined();

      // A third server starts, and reaps what dead servers left: the nested one is alive.
      const third = await startServer();
      try {
        await third.exec('echo ready');
        for (const pid of nested) expect(isAlive(pid), `nested server's process ${pid}`).toBe(true);
        expect(isAlive(started)).toBe(true);
      } finally {
        await third.close();
      }
      // Killing the outer command takes the nested server (and its shells) with it.
      const killed = await outer.ok<{ result: string }>('kill_process', {
        command_id: bg.command_id,
        grace_s: 2,
      });
      expect(killed.result).toBe('killed');
      await waitFor(() => [started, ...nested].every((pid) => !isAlive(pid)), {
        what: 'the nested server and its processes to be gone',
      });
    } finally {
      await outer.close();
    }
  });
});

describe('a SIGKILLed server leaves no private files', () => {
  const parent = mkdtempSync(join(tmpdir(), 'instances-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  test('the next start removes the dead instance directories, and keeps a live one', async () => {
    const env = { TMPDIR: parent };
    const live = await startServer({ env });
    await live.exec('echo live');
    const liveDirs = conchDirs(parent);
    expect(liveDirs.length).toBeGreaterThan(0);

    const victim = await startServer({ env });
    // An exported token lands in the environment snapshot, a long output in a spill file.
    await victim.exec('export VICTIM_TOKEN=tok-123; seq 1 200000 >/dev/null; seq 1 50000');
    const victimDirs = conchDirs(parent).filter((d) => !liveDirs.includes(d));
    expect(victimDirs.length).toBeGreaterThan(0);
    const files = victimDirs.flatMap((d) => readdirSync(join(parent, d)));
    expect(files.some((f) => f.endsWith('.log'))).toBe(true);
    const shells = descendants(victim.pid);
    process.kill(victim.pid, 'SIGKILL');
    await waitFor(() => !isAlive(victim.pid), { what: 'the killed server to be gone' });
    await waitFor(() => shells.every((pid) => !isAlive(pid)), { what: "the killed server's shells to die" });
    for (const d of victimDirs) expect(readdirSync(parent)).toContain(d);
    await victim.close().catch(() => {});

    const next = await startServer({ env });
    try {
      await next.exec('echo next');
      const now = conchDirs(parent);
      for (const d of victimDirs) expect(now, `dead instance dir ${d}`).not.toContain(d);
      for (const d of liveDirs) expect(now, `live instance dir ${d}`).toContain(d);
      expect((await live.exec('echo still')).output).toBe('still');
    } finally {
      await next.close();
      await live.close();
    }
    // Servers that end normally leave nothing either.
    expect(conchDirs(parent)).toEqual([]);
  });
});

describe('a SIGKILLed server leaves no processes', () => {
  test("the next start reaps the daemons its commands left (setsid, double fork), and spares a live server's", async () => {
    const live = await startServer();
    const victim = await startServer();
    try {
      const daemon = await live.exec("setsid sh -c 'sleep 431 &'; echo live-daemon");
      expect(daemon.output).toContain('live-daemon');
      const left = await victim.exec("setsid sh -c 'sleep 432 &'; (sleep 433 &); echo started", {
        background: true,
      });
      await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', left.command_id).length >= 2, {
        what: 'the escaped sleeps',
      });
      const owner = processEnvValue(processTree(victim.pid)[1]!, 'CONCH_OWNER');
      const liveOwner = processEnvValue(processTree(live.pid)[1]!, 'CONCH_OWNER');
      expect(owner).toBeDefined();
      const escaped = pidsWithEnv('CONCH_COMMAND_ID', left.command_id);
      process.kill(victim.pid, 'SIGKILL');
      await waitFor(() => !isAlive(victim.pid), { what: 'the killed server to be gone' });
      await victim.close().catch(() => {});
      // The escaped processes outlive their server (no parent-death signal reaches them).
      expect(escaped.some((pid) => isAlive(pid))).toBe(true);
      const next = await startServer();
      try {
        await next.exec('echo next');
        await waitFor(() => pidsWithEnv('CONCH_OWNER', owner).length === 0, {
          what: "no process of the dead server's",
        });
        const spared = pidsWithEnv('CONCH_COMMAND_ID', daemon.command_id);
        expect(spared.length).toBeGreaterThan(0);
        expect(pidsWithEnv('CONCH_OWNER', liveOwner).length).toBeGreaterThan(0);
        const killed = await live.ok<{ result: string }>('kill_process', { command_id: daemon.command_id });
        expect(killed.result).toBe('killed');
      } finally {
        await next.close();
      }
    } finally {
      await live.close();
    }
  });
});
