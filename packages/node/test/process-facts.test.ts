/**
 * Both implementations of the process facts — Linux's `/proc` and the portable `ps` (with `lsof`) — against
 * the same real processes: they must give the same answers (the `/proc` helpers of `@conch/node/testing`
 * are the independent witness).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { COMMAND_MARKER, type ProcessFacts } from '@conch/core/host';
import { waitFor } from '@conch/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  chooseProcessFactsKind,
  currentInstance,
  isInstanceAlive,
  PROCESS_FACTS_ENV,
  ProcProcessFacts,
  PsProcessFacts,
  processFactsOverride,
} from '../src/index.js';
import { isAlive, processCmdline, processStat } from '../src/testing/index.js';

const started: ChildProcess[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
});

/** Starts `bash -c script` in its own process group, with `env` added. */
function start(script: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn('/bin/bash', ['-c', script], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
    detached: true,
  });
  started.push(child);
  return child;
}

const implementations: [string, ProcessFacts][] = [
  ['proc', new ProcProcessFacts()],
  ['ps', new PsProcessFacts()],
];

describe.each(implementations)('process facts: %s', (kind, facts) => {
  it('says which it is', () => {
    expect(facts.kind).toBe(kind);
  });

  it('shows this process as /proc does: parent, group, session, state, name, start time, memory', async () => {
    const me = (await facts.processes()).find((p) => p.pid === process.pid);
    const stat = processStat(process.pid)!;
    expect(me).toMatchObject({ ppid: stat.ppid, pgid: stat.pgrp, state: expect.stringMatching(/^[RS]$/) });
    expect(me?.comm).toMatch(/node/);
    if (kind === 'proc') expect(me?.sid).toBe(stat.session);
    const started = Date.now() / 1000 - process.uptime();
    expect(Math.abs((me?.startTime ?? 0) - started)).toBeLessThanOrEqual(2);
    expect(me?.rssKb).toBeGreaterThan(10_000);
    expect(me?.rssKb).toBeLessThan(((process.memoryUsage.rss() / 1024) * 3) / 2);
  });

  it('finds a child, its children and its group, and tells when it is gone', async () => {
    const child = start('sleep 301 & sleep 302 & wait');
    const table = await waitFor(async () => {
      const all = await facts.processes();
      return all.filter((p) => p.ppid === child.pid && p.comm === 'sleep').length === 2 ? all : undefined;
    });
    const sleeps = table.filter((p) => p.ppid === child.pid);
    expect(sleeps.map((p) => p.comm)).toEqual(['sleep', 'sleep']);
    expect(sleeps.every((p) => p.pgid === child.pid)).toBe(true);
    expect((await facts.process(child.pid!))?.comm).toBe('bash');
    expect(await facts.alive([child.pid!, ...sleeps.map((p) => p.pid)])).toHaveLength(3);
    process.kill(-child.pid!, 'SIGKILL');
    await waitFor(async () =>
      (await facts.alive(sleeps.map((p) => p.pid))).length === 0 ? true : undefined,
    );
    expect(sleeps.some((p) => isAlive(p.pid))).toBe(false);
    expect(await facts.alive([])).toEqual([]);
    expect(await facts.process(2 ** 31 - 2)).toBeUndefined();
  });

  it('reads environment markers, never a marker-looking argument', async () => {
    const id = `c_facts_${kind}_${process.pid}`;
    const marked = start('exec sleep 303', { [COMMAND_MARKER]: id, CONCH_OTHER: 'x y' });
    // A process whose argument (its $0 here) reads like the marker, without it in its environment.
    const decoy = start(`exec bash -c 'sleep 304; :' ${COMMAND_MARKER}=${id}`);
    await waitFor(() => (processCmdline(decoy.pid!)?.includes(`${COMMAND_MARKER}=${id}`) ? true : undefined));
    await waitFor(async () => ((await facts.process(marked.pid!))?.comm === 'sleep' ? true : undefined));
    const all = await facts.markers([COMMAND_MARKER, 'CONCH_OTHER']);
    expect(all.get(marked.pid!)?.get(COMMAND_MARKER)).toBe(id);
    expect(all.get(decoy.pid!)?.get(COMMAND_MARKER)).toBeUndefined();
    const some = await facts.markers([COMMAND_MARKER], [marked.pid!, decoy.pid!]);
    expect([...some.keys()]).toEqual([marked.pid]);
    expect(await facts.markers([COMMAND_MARKER], [])).toEqual(new Map());
  });

  it('names a program by its command name and its argv[0]', async () => {
    const child = start('exec -a notasleep sleep 305', {});
    const names = await waitFor(async () => {
      const found = await facts.programNames([child.pid!]);
      return found.includes('notasleep') ? found : undefined;
    });
    expect(names).toContain('sleep');
  });
});

describe('the choice of process facts', () => {
  it('is /proc where it is readable, ps when CONCH_PROCESS_FACTS=ps forces it, and rejects other values', () => {
    expect(chooseProcessFactsKind({})).toBe('proc');
    expect(chooseProcessFactsKind({ [PROCESS_FACTS_ENV]: 'auto' })).toBe('proc');
    expect(chooseProcessFactsKind({ [PROCESS_FACTS_ENV]: 'ps' })).toBe('ps');
    expect(processFactsOverride({ [PROCESS_FACTS_ENV]: 'proc' })).toBe('proc');
    expect(() => chooseProcessFactsKind({ [PROCESS_FACTS_ENV]: 'sysctl' })).toThrow(
      /Invalid CONCH_PROCESS_FACTS="sysctl": valid values are auto, proc, ps/,
    );
  });

  it('identifies this server by pid and start time, whichever facts read them', async () => {
    const me = currentInstance();
    expect(me.pid).toBe(process.pid);
    expect(await isInstanceAlive(me)).toBe(true);
    const child = start('exec sleep 306');
    const startTime = await waitFor(async () => (await new PsProcessFacts().process(child.pid!))?.startTime);
    expect(await isInstanceAlive({ pid: child.pid!, startTime })).toBe(true);
    expect(await isInstanceAlive({ pid: child.pid!, startTime: startTime - 60 })).toBe(false);
    // A name without a start time (an older server's) is alive only while a node or conch process has the pid.
    expect(await isInstanceAlive({ pid: child.pid!, startTime: undefined })).toBe(false);
  });
});
