/**
 * The daemon's life (docs/cli.md "The daemon"): its home is private without changing a directory it did
 * not make, it works from a directory that cannot vanish, it goes when its socket goes, status and stop
 * agree, a restart is said, a person's ctrl+c leaves the command's id, and a stopped viewer costs it a
 * bounded amount of memory.
 */

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { procStatusKb } from '@conch/node/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, conchOnTty, createHome, endTtyTest, isRunning, relayClient } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(() => endTtyTest(home));

const daemonDir = () => home.env.CONCH_HOME as string;

/** True once the daemon lists a running `sleep 60` of this test. */
async function running60(): Promise<boolean> {
  const ps = await home.conch(['ps', '--running', '--json']);
  if (ps.code !== 0) return false;
  const { processes } = JSON.parse(ps.stdout) as { processes: { command: string }[] };
  return processes.some((p) => p.command === 'sleep 60');
}

describe('the daemon home', () => {
  it('an existing shared directory as CONCH_HOME keeps its mode and is refused with why', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'conch-shared-'));
    try {
      chmodSync(shared, 0o1777);
      const env = { ...home.env, CONCH_HOME: shared };
      const refused = spawnSync(process.execPath, [BIN, 'exec', '--', 'true'], { env, encoding: 'utf8' });
      expect(statSync(shared).mode & 0o7777).toBe(0o1777);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('open to other users (mode 1777)');
      expect(refused.stderr).toContain('CONCH_HOME');
    } finally {
      // (A daemon that took the directory anyway is stopped.)
      spawnSync(process.execPath, [BIN, 'daemon', 'stop'], { env: { ...home.env, CONCH_HOME: shared } });
      rmSync(shared, { recursive: true, force: true });
    }
  });
});

describe('the daemon works from a directory that cannot vanish', () => {
  it('the directory of the first command is removed: new sessions and commands still start', async () => {
    const first = join(home.dir, 'first-cwd');
    mkdirSync(first);
    expect((await home.conch(['exec', '--', 'true'], undefined, first)).code).toBe(0);
    const pid = home.daemonPid() as number;
    expect(readlinkSync(`/proc/${pid}/cwd`)).toBe('/');
    rmSync(first, { recursive: true });
    expect((await home.conch(['close', 'default'])).code).toBe(0);
    const next = await home.conch(['exec', '--', 'pwd']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout.trim()).not.toBe('');
    const bg = await home.conch(['exec', '--background', '--', 'echo bg-ok']);
    expect(bg.code, bg.stderr).toBe(0);
  });
});

describe('status and stop', () => {
  it('a daemon whose socket is removed exits by itself; the next command starts one', async () => {
    expect((await home.conch(['daemon', 'start'])).code).toBe(0);
    const pid = home.daemonPid() as number;
    unlinkSync(join(daemonDir(), 'daemon.sock'));
    await waitFor(() => !isRunning(pid), { what: 'the daemon without its socket has exited' });
    const next = await home.conch(['exec', '--', 'echo again']);
    expect(next.code).toBe(0);
    expect(home.daemonPid()).not.toBe(pid);
  });

  it('without its pid file, status and stop still agree (they ask the daemon)', async () => {
    expect((await home.conch(['daemon', 'start'])).code).toBe(0);
    const pid = home.daemonPid() as number;
    unlinkSync(join(daemonDir(), 'daemon.pid'));
    const status = JSON.parse((await home.conch(['daemon', 'status', '--json'])).stdout) as {
      running: boolean;
      pid?: number;
    };
    expect(status).toMatchObject({ running: true, pid });
    const stop = await home.conch(['daemon', 'stop']);
    expect(stop.stdout).toContain('stopped');
    await waitFor(() => !isRunning(pid), { what: 'the daemon has stopped' });
    expect((await home.conch(['daemon', 'status'])).code).toBe(3);
  });
});

describe('a restart is said', () => {
  it('after a crash, the next command says a new daemon started and its shell is new', async () => {
    expect((await home.conch(['exec', '--', 'cd /tmp'])).code).toBe(0);
    const dead = home.daemonPid() as number;
    process.kill(dead, 'SIGKILL');
    await waitFor(() => !isRunning(dead), { what: 'the daemon is dead' });
    const next = await home.conch(['exec', '--', 'pwd']);
    expect(next.code).toBe(0);
    expect(next.stderr).toContain('daemon');
    expect(next.stderr).toContain('new shell');
    const json = await home.conch(['exec', '--json', '--', 'true']);
    expect((JSON.parse(json.stdout) as { new_shell?: boolean }).new_shell).toBeUndefined();
  });

  it('a conch exec in flight when the daemon dies says so, not "Connection closed"', async () => {
    expect((await home.conch(['daemon', 'start'])).code).toBe(0);
    const pid = home.daemonPid() as number;
    const running = home.conch(['exec', '--', 'sleep 60']);
    await waitFor(running60, { what: 'the command runs' });
    process.kill(pid, 'SIGKILL');
    const run = await running;
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('Connection closed');
    expect(run.stderr).toContain('daemon');
    expect(run.stderr).toContain('daemon.log');
  });

  it('the relay answers a call in flight when the daemon dies, and the next call works in a new shell', async () => {
    const { client } = await relayClient(home);
    try {
      await client.callTool({ name: 'execute', arguments: { command: 'cd /tmp' } });
      const dead = home.daemonPid() as number;
      const inFlight = client.callTool({ name: 'execute', arguments: { command: 'sleep 60' } });
      await waitFor(running60, { what: 'the command runs' });
      process.kill(dead, 'SIGKILL');
      await expect(inFlight).rejects.toThrow(/daemon stopped/);
      const next = await client.callTool({ name: 'execute', arguments: { command: 'echo back' } });
      expect(next.structuredContent).toMatchObject({ output: 'back', new_shell: true });
      expect(home.daemonPid()).not.toBe(dead);
    } finally {
      await client.close();
    }
  });
});

describe('ctrl+c during a streaming conch exec', () => {
  it('prints the command id and how to read or kill it, exits 130, and the command keeps running', async () => {
    const run = conchOnTty(['exec', '--', 'echo started; sleep 60'], home.env as Record<string, string>);
    await waitFor(() => run.text.includes('started'), { what: 'the output streams' });
    run.term.write('\u0003');
    await waitFor(() => run.exitCode !== undefined, { what: 'conch exits' });
    expect(run.exitCode).toBe(130);
    const id = /(c_[a-z0-9]{10})/.exec(run.text)?.[1] as string;
    expect(id, run.text).toBeDefined();
    expect(run.text).toContain(`conch read ${id}`);
    expect(run.text).toContain(`conch kill ${id}`);
    const ps = await home.conch(['ps', '--running']);
    expect(ps.stdout).toContain(id);
    await home.conch(['kill', id]);
  });
});

describe('a viewer that stops reading', () => {
  it('a stopped conch attach during a flood costs the daemon a bounded amount of memory', async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const pid = home.daemonPid() as number;
    const view = conchOnTty(['attach', 'default'], home.env as Record<string, string>);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });
    const before = procStatusKb(pid, 'VmRSS') as number;
    process.kill(view.term.pid, 'SIGSTOP');
    try {
      // About 60 MB of output while the viewer reads nothing.
      const flood = await home.conch([
        'exec',
        '--total',
        '600',
        '--pause',
        '60',
        '--',
        'yes flood | head -c 60000000; echo',
      ]);
      expect(flood.code).toBe(0);
      const after = procStatusKb(pid, 'VmRSS') as number;
      // The flood itself costs the engine some 60 MB here (its output rings, the screen, the heap's slack);
      // a viewer that queued all of it as notifications cost about 300 MB more (base64 in JSON lines).
      expect(after - before, `RSS ${before} kB → ${after} kB`).toBeLessThan(128 * 1024);
    } finally {
      process.kill(view.term.pid, 'SIGCONT');
    }
    view.term.write('\u001d');
    await waitFor(() => view.exitCode !== undefined, { what: 'the viewer detached' });
  });
});
