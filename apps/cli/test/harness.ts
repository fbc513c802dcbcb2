/**
 * Runs the BUILT `conch` binary with a private CONCH_HOME (so tests never touch a real user's daemon)
 * and stops the daemon it started afterwards, checking that it is gone.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@conch/core/testing';
import { isAlive } from '@conch/node/testing';
import * as pty from '@lydell/node-pty';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The built CLI (the package's bin). */
export const BIN = resolve(here, '../dist/bin.cjs');

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

/** A private daemon home and a runner of the built binary in it. */
export interface CliHome {
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Runs the built `conch ARGS` (stdin `input`, in directory `cwd`) and resolves once it exits. */
  conch(args: readonly string[], input?: string, cwd?: string): Promise<Run>;
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
  const conch = (args: readonly string[], input?: string, cwd?: string): Promise<Run> =>
    new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(cwd === undefined ? {} : { cwd }),
      });
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
      if (pid !== undefined) await waitFor(() => !isRunning(pid), { what: `daemon ${pid} is gone` });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An MCP client of `conch mcp --daemon` in `home`: it speaks to the same daemon as `home.conch`. */
export async function connectDaemonMcp(home: CliHome): Promise<Client> {
  const client = new Client({ name: 'test', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--daemon'],
      env: home.env as Record<string, string>,
      stderr: 'pipe',
    }),
  );
  return client;
}

/**
 * Starts the daemon in the foreground with `config` as its conch.config.json (in the home's directory), and
 * waits until it is the one answering; {@link CliHome.dispose} stops it.
 */
export async function startDaemonWithConfig(home: CliHome, config: object): Promise<void> {
  const file = join(home.dir, 'conch.config.json');
  writeFileSync(file, JSON.stringify(config));
  const daemon = spawn(process.execPath, [BIN, 'daemon', 'run', '--config', file], {
    env: home.env,
    stdio: 'ignore',
    detached: true,
  });
  daemon.unref();
  await waitFor(() => home.daemonPid() === daemon.pid, { what: 'the daemon with the config is up' });
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
    await waitFor(() => !isRunning(pid), { what: 'the conch client on a terminal is gone' });
  }
}

/**
 * Ends a test that ran conch on terminals: kills every terminal {@link conchOnTty} started and waits until
 * each is gone, then disposes `home` (which stops its daemon).
 */
export async function endTtyTest(home: CliHome | undefined): Promise<void> {
  await killTerminals();
  await home?.dispose();
}

/**
 * Starts the daemon of `home` in the foreground with `args` (e.g. `--config FILE`), and waits until it is
 * the daemon answering. `home.dispose()` stops it.
 */
export async function startDaemon(home: CliHome, args: readonly string[]): Promise<ChildProcess> {
  const daemon = spawn(process.execPath, [BIN, 'daemon', 'run', ...args], {
    env: home.env,
    stdio: 'ignore',
    detached: true,
  });
  daemon.unref();
  await waitFor(() => home.daemonPid() === daemon.pid, { what: 'the daemon with its settings is up' });
  return daemon;
}

/** An MCP client of `conch mcp --daemon` in `home` (an agent's view of the daemon). */
export async function relayClient(home: CliHome): Promise<{ client: Client; stderr(): string }> {
  const client = new Client({ name: 'test-agent', version: '0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--daemon'],
    env: home.env as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}
