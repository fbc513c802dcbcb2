import { execFileSync, spawn } from 'node:child_process';
import { waitFor } from '@conch/core/testing';
import { countWithCommandId, isAlive, processTree } from '@conch/node/testing';
import { REAPER } from '@conch/ssh/testing';
import { describe, expect, it } from 'vitest';
import {
  CONNECT_PROBE,
  ESCAPED_SCRIPT,
  KILL_SCRIPT,
  PROBE_SCRIPT,
  parseEscapedReport,
  SIGNAL_SCRIPT,
  shCommand,
  startupScript,
} from '../src/remote-scripts.js';

/** Runs a command line the way sshd would: through `sh -c`. */
function viaShell(command: string, env: Record<string, string> = {}): string {
  return execFileSync('/bin/sh', ['-c', command], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  }).toString();
}

describe('remote scripts', () => {
  it('are valid POSIX sh (dash)', () => {
    for (const script of [CONNECT_PROBE, KILL_SCRIPT, ESCAPED_SCRIPT, PROBE_SCRIPT, SIGNAL_SCRIPT]) {
      execFileSync('/bin/sh', ['-n', '-c', script]);
    }
  });

  it('start a program with exact arguments, environment and cwd, after a start marker with its pid', () => {
    const tricky = `it's "quoted" \\ back $HOME \`x\` !bang\nnew line`;
    const out = viaShell(
      shCommand(
        startupScript({
          nonce: 'abc123',
          file: '/bin/sh',
          args: ['-c', 'printf "%s|" "$1" "$V" "$PWD" "$$"', 'zero', tricky],
          cwd: '/tmp',
          env: { V: tricky },
        }),
      ),
    );
    const marker = /^\x1b\]6975;abc123;pid;(\d+)\x07(.*)$/s.exec(out);
    expect(marker).not.toBeNull();
    expect(marker?.[2]).toBe(`${tricky}|${tricky}|/tmp|${marker?.[1]}|`);
  });

  it('report a missing cwd or program instead of starting', () => {
    const run = (options: { file: string; cwd?: string }) => {
      try {
        viaShell(
          shCommand(
            startupScript({ nonce: 'n0nce', file: options.file, args: [], cwd: options.cwd, env: {} }),
          ),
        );
        return 'started';
      } catch (error) {
        return String((error as { stdout: Buffer }).stdout);
      }
    };
    expect(run({ file: '/bin/true', cwd: '/no/such/dir' })).toBe('\x1b]6975;n0nce;err;cwd\x07');
    expect(run({ file: '/no/such/program' })).toBe('\x1b]6975;n0nce;err;program\x07');
    expect(() =>
      startupScript({ nonce: 'n', file: 'x', args: [], cwd: undefined, env: { 'BAD-NAME': '1' } }),
    ).toThrow();
  });

  it('kill a whole tree, including a double-forked escaped process found by its command id', async () => {
    // Under the test reaper, so that the killed orphans are reaped (PID 1 in a container may not reap).
    const script = 'sleep 300 & (setsid sleep 301 &); sleep 302';
    const child = spawn(
      'python3',
      ['-c', REAPER, '/usr/bin/env', 'CONCH_COMMAND_ID=c_scripttest', '/usr/bin/setsid', 'sh', '-c', script],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const ready = () => processTree(child.pid!).length === 5 && countWithCommandId('c_scripttest') === 4;
      await waitFor(ready, { what: 'the tree and its escaped process' }).catch(() => undefined);
      expect(ready()).toBe(true);
      // The session leader (sh) is the reaper's child; the escaped process was re-parented to the reaper.
      const root = processTree(child.pid!)[1]!;
      const args = ['tree', 'TERM', '10', String(root), 'CONCH_COMMAND_ID=c_scripttest'];
      expect(viaShell(shCommand(KILL_SCRIPT, args)).trim()).toBe('CONCH_KILL killed');
      expect(isAlive(root)).toBe(false);
      expect(countWithCommandId('c_scripttest')).toBe(0);
      // The reaper exits once its orphans are reaped.
      await exited;
      expect(viaShell(shCommand(KILL_SCRIPT, args)).trim()).toBe('CONCH_KILL already_exited');
    } finally {
      for (const pid of processTree(child.pid!).reverse()) process.kill(pid, 'SIGKILL');
    }
  });

  it("list the processes carrying a command id with their states, and the terminal's forks", async () => {
    // A shell (the "terminal's process") with a subshell of its own and a program carrying a command id.
    const script = '(sleep 304; :) & CONCH_COMMAND_ID=c_markedtest sleep 303 & wait';
    const child = spawn('sh', ['-c', script], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const report = () =>
        parseEscapedReport(
          viaShell(shCommand(ESCAPED_SCRIPT, [String(child.pid), 'c_markedtest', 'c_nothing'])),
          ['c_markedtest', 'c_nothing'],
          child.pid,
        );
      const settled = () => {
        const r = report();
        return r.escaped.get('c_markedtest')?.[0]?.state === 'S' && r.forks[0]?.state === 'S' ? r : undefined;
      };
      await waitFor(settled, { what: 'the processes to settle' }).catch(() => undefined);
      const seen = settled();
      expect(seen?.escaped.size).toBe(1);
      expect(seen?.escaped.get('c_markedtest')).toHaveLength(1);
      expect(seen?.forks).toHaveLength(1);
      expect(processTree(child.pid!)).toEqual(
        expect.arrayContaining([seen?.forks[0]?.pid, seen?.escaped.get('c_markedtest')?.[0]?.pid]),
      );
      // The terminal's own process never counts; other ids and malformed entries are left out.
      expect(parseEscapedReport(`c_m ${child.pid}:S\nforks\n`, ['c_m'], child.pid)).toEqual({
        escaped: new Map(),
        forks: [],
      });
      expect(parseEscapedReport('c_other 12:S\nc_x 13 14:? 15:R\nforks 16:R', ['c_x'], undefined)).toEqual({
        escaped: new Map([['c_x', [{ pid: 15, state: 'R' }]]]),
        forks: [{ pid: 16, state: 'R' }],
      });
    } finally {
      for (const pid of processTree(child.pid!).reverse()) process.kill(pid, 'SIGKILL');
      await exited;
    }
  });
});
