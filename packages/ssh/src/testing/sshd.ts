/**
 * Test harness: a real OpenSSH server (Debian's openssh-server) on 127.0.0.1, started by the tests.
 * Exported as `@conch/ssh/testing` for this package's tests and the apps' (e.g. the MCP server's
 * `connect_ssh` tests). Needs root (to create the user), `/usr/sbin/sshd`, `ssh-keygen`, `ssh-agent` and
 * `python3`.
 *
 * - an unprivileged user `conchtest` (created when missing) with a random password kept root-only in
 *   /run/conch-test (one per boot, so that concurrent test files agree);
 * - client keys: a plain one, a passphrase-protected one, and one that only the ssh-agent holds;
 * - host keys A and B (B is the "changed" key);
 * - `startSshd()` writes a private sshd_config (high random port, `ListenAddress 127.0.0.1`, `UsePAM no`,
 *   `StrictModes no`, an `AuthorizedKeysFile` the user can read, `MaxSessions` as asked), starts
 *   `/usr/sbin/sshd -D -e -f CONFIG`, and waits until the port accepts connections;
 * - `stop()` kills the listener and every process below it, and waits until they are gone.
 *
 * Everything waits for conditions (never fixed sleeps) and leaves no process behind.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { isAlive, processTree } from '@conch/node/testing';

/**
 * A tiny reaper that sshd runs under: it makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
 * that processes orphaned when a test kills sshd are reaped here instead of becoming zombies of a PID 1
 * that does not reap (containers). Exits once sshd and every orphan are gone.
 */
export const REAPER = [
  'import ctypes, os, signal, sys',
  'ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)',
  'pid = os.fork()',
  'if pid == 0:',
  '    os.execv(sys.argv[1], sys.argv[1:])',
  'signal.signal(signal.SIGTERM, lambda s, f: os.kill(pid, signal.SIGTERM))',
  'while True:',
  '    try:',
  '        os.wait()',
  '    except ChildProcessError:',
  '        break',
].join('\n');

/** The test user's name. */
export const TEST_USER = 'conchtest';

/** One running sshd instance. */
export interface Sshd {
  readonly port: number;
  /** PID of the listening sshd (its parent is a reaper started by the harness). */
  readonly pid: number;
  /** Path of the host private key it serves. */
  readonly hostKeyPath: string;
  /** Its stderr log so far (LogLevel VERBOSE). */
  log(): string;
  /**
   * The command lines clients asked this sshd to run (the text the user's shell gets after `-c`, where
   * `ps` shows it), oldest first; empty unless started with `recordCommands`.
   */
  commands(): string[];
  /** PIDs of the listener and every process below it (per-connection sshd processes, shells, ...). */
  tree(): number[];
  /** Sends a signal to the listener and every process below it. */
  signalTree(signal: NodeJS.Signals): void;
  /** Kills the listener and everything below it, and waits until all are gone. */
  stop(): Promise<void>;
}

/** Options of {@link SshFixture.startSshd}. */
export interface SshdOptions {
  /** `MaxSessions` (OpenSSH's per-connection channel limit; default 10). */
  maxSessions?: number;
  /** Which host key to serve (default 'a'). */
  hostKey?: 'a' | 'b';
  /** Reuse this port (restarting a stopped instance). */
  port?: number;
  /**
   * Record every command line a client asks to run (`ForceCommand` of a small script that appends
   * `$SSH_ORIGINAL_COMMAND` to a log, then runs it with the user's shell), for {@link Sshd.commands}.
   */
  recordCommands?: boolean;
}

/** Users, keys, an ssh-agent and sshd instances for one test file. */
export interface SshFixture {
  readonly dir: string;
  readonly user: string;
  readonly password: string;
  readonly keys: { plain: string; encrypted: string; passphrase: string; agentOnly: string };
  readonly hostKeys: { a: string; b: string };
  /** The ssh-agent's socket (holds `keys.agentOnly`). */
  readonly agentSocket: string;
  startSshd(options?: SshdOptions): Promise<Sshd>;
  /** A known_hosts line for `[127.0.0.1]:port` with host key `which`. */
  knownHostsLine(port: number, which: 'a' | 'b'): string;
  /** The SHA256 fingerprint of host key `which` as ssh-keygen prints it. */
  fingerprint(which: 'a' | 'b'): string;
  /** Stops every sshd and the agent, and removes the files. */
  dispose(): Promise<void>;
}

/** Runs a command, retrying while another process holds the passwd lock. */
function runWithLockRetry(file: string, args: string[], input?: string): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      execFileSync(file, args, {
        stdio: ['pipe', 'ignore', 'pipe'],
        ...(input === undefined ? {} : { input }),
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      execFileSync('sleep', ['0.1']);
    }
  }
}

/**
 * The test user's password: random, created once per boot in a root-only file, so that test files (or
 * packages) running at the same time agree on it.
 */
function testPassword(): string {
  const dir = '/run/conch-test';
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'password');
  try {
    writeFileSync(file, `pw-${randomBytes(12).toString('base64url')}`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (let i = 0; ; i++) {
    // Another process may have created the file but not written it yet.
    const password = readFileSync(file, 'utf8').trim();
    if (password !== '' || i > 100) return password;
    execFileSync('sleep', ['0.01']);
  }
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Kills the given processes with SIGKILL and waits until they are gone. */
export async function killAndWait(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await waitFor(() => !pids.some(isAlive), { timeoutMs: 10_000, what: 'processes to die' });
}

function keygen(path: string, passphrase = ''): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'conch-test', '-f', path], {
    stdio: 'ignore',
  });
}

/** Creates users, keys and an agent for one test file. Needs root and Debian's openssh-server. */
export async function createSshFixture(): Promise<SshFixture> {
  if (!existsSync('/usr/sbin/sshd'))
    throw new Error('/usr/sbin/sshd is missing: apt-get install -y openssh-server');
  const dir = mkdtempSync(join(tmpdir(), 'conch-sshd-'));
  // sshd reads AuthorizedKeysFile as the user: the directory must be reachable by it.
  chmodSync(dir, 0o755);
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

  if (!userExists(TEST_USER)) {
    try {
      runWithLockRetry('useradd', ['-m', '-s', '/bin/bash', TEST_USER]);
    } catch (error) {
      if (!userExists(TEST_USER)) throw error;
    }
  }
  const password = testPassword();
  runWithLockRetry('chpasswd', [], `${TEST_USER}:${password}\n`);

  const keys = {
    plain: join(dir, 'id_plain'),
    encrypted: join(dir, 'id_encrypted'),
    passphrase: `pass-${randomBytes(6).toString('hex')}`,
    agentOnly: join(dir, 'id_agent'),
  };
  keygen(keys.plain);
  keygen(keys.encrypted, keys.passphrase);
  keygen(keys.agentOnly);
  const hostKeys = { a: join(dir, 'host_a'), b: join(dir, 'host_b') };
  keygen(hostKeys.a);
  keygen(hostKeys.b);
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(
    authorized,
    [keys.plain, keys.encrypted, keys.agentOnly]
      .map((k) => readFileSync(`${k}.pub`, 'utf8').trim())
      .join('\n') + '\n',
  );
  chmodSync(authorized, 0o644);

  // An ssh-agent in the foreground (-D) so that the test owns its process; holds only keys.agentOnly.
  const agentSocket = join(dir, 'agent.sock');
  const agent = spawn('ssh-agent', ['-D', '-a', agentSocket], { stdio: 'ignore' });
  await waitFor(() => existsSync(agentSocket), { timeoutMs: 10_000, what: 'ssh-agent socket' });
  execFileSync('ssh-add', ['-q', keys.agentOnly], {
    env: { ...process.env, SSH_AUTH_SOCK: agentSocket },
    stdio: 'ignore',
  });

  const banner = join(dir, 'banner.txt');
  writeFileSync(banner, 'conch test server: authorised use only\n');

  const instances = new Set<Sshd>();

  const startSshd = async (options: SshdOptions = {}): Promise<Sshd> => {
    const port = options.port ?? (await freePort());
    const hostKeyPath = options.hostKey === 'b' ? hostKeys.b : hostKeys.a;
    const config = join(dir, `sshd_config_${port}`);
    const commandLog = join(dir, `commands_${port}.log`);
    const recorder = join(dir, `record_command_${port}.sh`);
    if (options.recordCommands) {
      // Written as root in a root-owned directory: the test user can append to the log, nothing more.
      writeFileSync(commandLog, '');
      chmodSync(commandLog, 0o666);
      writeFileSync(
        recorder,
        [
          '#!/bin/sh',
          '[ -n "${SSH_ORIGINAL_COMMAND+x}" ] || exec "${SHELL:-/bin/sh}" -l',
          `printf '%s\\0' "$SSH_ORIGINAL_COMMAND" >> '${commandLog}'`,
          'exec "${SHELL:-/bin/sh}" -c "$SSH_ORIGINAL_COMMAND"',
          '',
        ].join('\n'),
      );
      chmodSync(recorder, 0o755);
    }
    writeFileSync(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKeyPath}`,
        `PidFile ${join(dir, `sshd_${port}.pid`)}`,
        'UsePAM no',
        'StrictModes no',
        'PasswordAuthentication yes',
        'PubkeyAuthentication yes',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin no',
        `AllowUsers ${TEST_USER}`,
        `AuthorizedKeysFile ${authorized}`,
        `MaxSessions ${options.maxSessions ?? 10}`,
        'MaxStartups 100',
        'AllowTcpForwarding yes',
        'PrintMotd no',
        'PrintLastLog no',
        `Banner ${banner}`,
        'LogLevel VERBOSE',
        ...(options.recordCommands ? [`ForceCommand ${recorder}`] : []),
        '',
      ].join('\n'),
    );
    const child: ChildProcess = spawn('python3', ['-c', REAPER, '/usr/sbin/sshd', '-D', '-e', '-f', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (log.length < 1_000_000) log += d.toString('utf8');
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    const started = await waitFor(
      async () => (exited ? 'exited' : (await portAccepts(port)) && 'listening'),
      {
        timeoutMs: 15_000,
        what: `sshd on port ${port}`,
      },
    );
    if (started === 'exited') throw new Error(`sshd exited at start:\n${log}`);
    const reaper = child.pid!;
    // The listening sshd is the reaper's child.
    const pid = await waitFor(() => processTree(reaper)[1], { timeoutMs: 5000, what: 'sshd listener pid' });
    const sshd: Sshd = {
      port,
      pid,
      hostKeyPath,
      log: () => log,
      commands: () =>
        options.recordCommands ? readFileSync(commandLog, 'utf8').split('\0').slice(0, -1) : [],
      tree: () => processTree(pid),
      signalTree(signal) {
        for (const p of processTree(pid)) {
          try {
            process.kill(p, signal);
          } catch {
            // gone
          }
        }
      },
      async stop() {
        instances.delete(sshd);
        // Orphans go to the reaper, which reaps them and exits once nothing is left below it.
        await waitFor(
          async () => {
            if (exited) return true;
            await killAndWait(processTree(reaper).slice(1));
            return false;
          },
          { timeoutMs: 10_000, what: 'sshd and its processes to exit' },
        );
      },
    };
    instances.add(sshd);
    return sshd;
  };

  const publicKey = (which: 'a' | 'b') =>
    readFileSync(`${hostKeys[which]}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');

  return {
    dir,
    user: TEST_USER,
    password,
    keys,
    hostKeys,
    agentSocket,
    startSshd,
    knownHostsLine: (port, which) => `[127.0.0.1]:${port} ${publicKey(which)}`,
    fingerprint: (which) =>
      execFileSync('ssh-keygen', ['-l', '-f', `${hostKeys[which]}.pub`])
        .toString()
        .split(/\s+/)[1] ?? '',
    async dispose() {
      for (const sshd of [...instances]) await sshd.stop();
      if (agent.pid !== undefined && agent.exitCode === null) {
        const gone = new Promise((r) => agent.once('exit', r));
        agent.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
