/**
 * The host scripts of `@conch/core/host`, run the way a driver over a channel runs them (through `sh -c`),
 * on this machine.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { decideInputWait } from '@conch/core';
import {
  CONNECT_PROBE,
  ESCAPED_SCRIPT,
  HostScripts,
  KILL_SCRIPT,
  PROBE_SCRIPT,
  parseConnectProbe,
  type RunHostScript,
  SIGNAL_SCRIPT,
  shCommand,
  startupScript,
} from '@conch/core/host';
import { waitFor } from '@conch/core/testing';
import { countWithCommandId, isAlive, processTree } from '@conch/node/testing';
import { REAPER } from '@conch/ssh/testing';
import { describe, expect, it } from 'vitest';

/** Runs a command line the way sshd would: through `sh -c`. */
function viaShell(command: string, env: Record<string, string> = {}): string {
  return execFileSync('/bin/sh', ['-c', command], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  }).toString();
}

/** Runs a host script on this machine, as `sh -c SCRIPT conch ARGS…`. */
const runHere: RunHostScript = (script, args, call) =>
  new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', script, 'conch', ...args], { timeout: call.timeoutMs }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });

/** SIGKILLs `root` and its descendants (leaves first; one that already went is no error). */
function killTree(root: number): void {
  for (const pid of processTree(root).reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

describe('host scripts', () => {
  it('are valid POSIX sh (dash)', () => {
    for (const script of [CONNECT_PROBE, KILL_SCRIPT, ESCAPED_SCRIPT, PROBE_SCRIPT, SIGNAL_SCRIPT]) {
      execFileSync('/bin/sh', ['-n', '-c', script]);
    }
  });

  it("the connect probe makes a private directory and says how the host's process facts are read", () => {
    const probe = parseConnectProbe(viaShell(shCommand(CONNECT_PROBE)));
    try {
      expect(probe?.privateDir).toMatch(/\/conch-/);
      expect(statSync(probe!.privateDir).mode & 0o777).toBe(0o700);
      expect(probe?.facts).toBe('proc');
    } finally {
      if (probe?.privateDir) rmSync(probe.privateDir, { recursive: true, force: true });
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
});

/** A python helper that runs a program on a new pseudo-terminal, prints its pid, and drains the terminal. */
const ON_A_TERMINAL = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
print(pid, flush=True)
try:
    while os.read(fd, 4096):
        pass
except OSError:
    pass
os.waitpid(pid, 0)
`;

/** Starts `argv` on a terminal of its own; resolves with its pid (the terminal's session leader). */
async function onATerminal(argv: string[]): Promise<{ pid: number; stop: () => Promise<void> }> {
  const helper = spawn('python3', ['-c', ON_A_TERMINAL, ...argv], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => helper.once('exit', resolve));
  const pid = await new Promise<number>((resolve) => {
    let out = '';
    helper.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
  });
  return {
    pid,
    stop: async () => {
      killTree(helper.pid!);
      await exited;
    },
  };
}

describe.each(['proc', 'ps'] as const)('host scripts reading %s', (facts) => {
  const id = `c_scripttest_${facts}`;
  const escaped = `c_escapedtest_${facts}`;

  it('kill a whole tree, including a double-forked escaped process found by its command id', async () => {
    // Under the test reaper, so that the killed orphans are reaped (PID 1 in a container may not reap).
    const script = 'sleep 300 & (setsid sleep 301 &); sleep 302';
    const child = spawn(
      'python3',
      ['-c', REAPER, '/usr/bin/env', `CONCH_COMMAND_ID=${id}`, '/usr/bin/setsid', 'sh', '-c', script],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const ready = () => processTree(child.pid!).length === 5 && countWithCommandId(id) === 4;
      await waitFor(ready, { what: 'the tree and its escaped process' }).catch(() => undefined);
      expect(ready()).toBe(true);
      // The session leader (sh) is the reaper's child; the escaped process was re-parented to the reaper.
      const root = processTree(child.pid!)[1]!;
      const scripts = new HostScripts(runHere, facts);
      const kill = () =>
        scripts.kill({
          mode: 'tree',
          signal: 'TERM',
          graceMs: 1000,
          root,
          markers: [`CONCH_COMMAND_ID=${id}`],
        });
      expect(await kill()).toEqual({ result: 'killed', survivors: [] });
      expect(isAlive(root)).toBe(false);
      expect(countWithCommandId(id)).toBe(0);
      // The reaper exits once its orphans are reaped.
      await exited;
      expect(await kill()).toEqual({ result: 'already_exited', survivors: [] });
    } finally {
      killTree(child.pid!);
    }
  });

  it("list the processes carrying a command id with their states, and the terminal's forks", async () => {
    // A shell (the "terminal's process") with a subshell of its own and a program carrying a command id.
    const script = `(sleep 304; :) & CONCH_COMMAND_ID=${escaped} sleep 303 & wait`;
    const child = spawn('sh', ['-c', script], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const scripts = new HostScripts(runHere, facts);
      const report = () => scripts.escapedProcesses(child.pid, [escaped, 'c_nothing']);
      const settled = async () => {
        const r = await report();
        return r.escaped.get(escaped)?.[0]?.state === 'S' && r.forks[0]?.state === 'S' ? r : undefined;
      };
      await waitFor(settled, { what: 'the processes to settle' }).catch(() => undefined);
      const seen = await settled();
      expect(seen?.escaped.size).toBe(1);
      expect(seen?.escaped.get(escaped)).toHaveLength(1);
      expect(seen?.forks).toHaveLength(1);
      expect(processTree(child.pid!)).toEqual(
        expect.arrayContaining([seen?.forks[0]?.pid, seen?.escaped.get(escaped)?.[0]?.pid]),
      );
    } finally {
      killTree(child.pid!);
      await exited;
    }
  });

  it("probe the terminal's foreground group: a blocked read, its programs' names, and the kind of facts", async () => {
    const scripts = new HostScripts(runHere, facts);
    const reader = await onATerminal([
      'bash',
      '--norc',
      '--noprofile',
      '-c',
      'exec -a notabash bash --norc --noprofile -c "read x; :"',
    ]);
    try {
      const report = await waitFor(
        async () => {
          const r = await scripts.probe(reader.pid);
          return decideInputWait(r.facts) === 'blocked_read' ? r : undefined;
        },
        { what: 'the reader blocked reading its terminal' },
      ).catch(() => scripts.probe(reader.pid));
      expect(report.factsKind).toBe(facts);
      expect(decideInputWait(report.facts)).toBe('blocked_read');
      expect(report.fg).toBe(reader.pid);
      expect(report.names).toEqual(expect.arrayContaining(['bash', 'notabash']));
    } finally {
      await reader.stop();
    }
    const sleeper = await onATerminal(['sleep', '300']);
    try {
      const report = await waitFor(
        async () => {
          const r = await scripts.probe(sleeper.pid);
          return r.names?.[0] === 'sleep' ? r : undefined;
        },
        { what: 'sleep in the foreground' },
      ).catch(() => scripts.probe(sleeper.pid));
      expect(decideInputWait(report.facts)).toBe('no');
      // The foreground signal reaches it.
      await scripts.signalForeground(sleeper.pid, 'term');
      await waitFor(() => !isAlive(sleeper.pid), { what: 'the signalled sleep to end' }).catch(
        () => undefined,
      );
      expect(isAlive(sleeper.pid)).toBe(false);
    } finally {
      await sleeper.stop();
    }
  });
});
