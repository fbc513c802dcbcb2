/**
 * Runs the BUILT `conch` binary with a private CONCH_HOME (so tests never touch a real user's daemon)
 * and stops the daemon it started afterwards, checking that it is gone.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive } from '@conch/node/testing';
import * as pty from '@lydell/node-pty';

const here = dirname(fileURLToPath(import.meta.url));
/** The built CLI. */
export const BIN = resolve(here, '../dist/bin.js');

/** Fails early when the CLI has not been built. */
export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (turbo run build).`);
}

/** What one run of `conch` gave. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** True while `pid` exists and is not a zombie (the one /proc helper, from `@conch/node/testing`). */
export const isRunning: (pid: number) => boolean = isAlive;

/** Polls `check` until true; fails after `timeoutMs` (a bound on a condition, not a timed assertion). */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A private daemon home and a runner of the built binary in it. */
export interface CliHome {
  dir: string;
  env: NodeJS.ProcessEnv;
  conch(args: readonly string[], input?: string): Promise<Run>;
  /** The pid of the daemon now answering (from its pid file). */
  daemonPid(): number | undefined;
  /** Stops the daemon (if any), checks it is gone, removes the home. */
  dispose(): Promise<void>;
}

/** Creates a private home for the daemon. */
export function createHome(): CliHome {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'conch-cli-test-'));
  const env: NodeJS.ProcessEnv = { ...process.env, CONCH_HOME: join(dir, 'home'), NO_COLOR: '1' };
  const conch = (args: readonly string[], input?: string): Promise<Run> =>
    new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      child.on('error', reject);
      child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  const daemonPid = () => {
    try {
      return Number(readFileSync(join(dir, 'home', 'daemon.pid'), 'utf8').trim()) || undefined;
    } catch {
      return undefined;
    }
  };
  return {
    dir,
    env,
    conch,
    daemonPid,
    async dispose() {
      const pid = daemonPid();
      await conch(['daemon', 'stop']);
      if (pid !== undefined) await waitUntil(() => !isRunning(pid), `daemon ${pid} is gone`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `conch` running on a real pseudo-terminal: what it printed so far, and its exit code once it exits. */
export interface TtyRun {
  text: string;
  exitCode: number | undefined;
  term: pty.IPty;
}

const terminals: pty.IPty[] = [];

/** Runs `conch ARGS` on a real pseudo-terminal (stdin, stdout and stderr a TTY); {@link killTerminals} ends it. */
export function conchOnTty(
  args: readonly string[],
  env: Record<string, string>,
  size: { cols: number; rows: number } = { cols: 100, rows: 30 },
): TtyRun {
  const term = pty.spawn(process.execPath, [BIN, ...args], { ...size, env });
  terminals.push(term);
  const run: TtyRun = { text: '', exitCode: undefined, term };
  term.onData((data) => {
    run.text += data;
  });
  term.onExit(({ exitCode }) => {
    run.exitCode = exitCode;
  });
  return run;
}

/** Kills every terminal {@link conchOnTty} started that still runs, and waits until each is gone. */
export async function killTerminals(): Promise<void> {
  for (const term of terminals.splice(0)) {
    const pid = term.pid;
    if (isRunning(pid)) term.kill('SIGKILL');
    await waitUntil(() => !isRunning(pid), 'the conch client on a terminal is gone');
  }
}
