/**
 * Sandboxed sessions (docs/sandbox.md) through the real built server over MCP, on real bubblewrap: with no
 * command policy at all, the destructive spellings that fool parsers (the policy corpus's real bypasses,
 * wrappers, eval, a base64-decoded script, interpreters, a background job, a double fork) leave a victim
 * outside the writable paths intact and complete with their real exit codes; the cwd stays writable;
 * deny_read hides; the network is closed, or open to the listed hosts only; an unavailable sandbox fails
 * closed; `--sandbox-required` refuses what would widen or drop the sandbox. The parts that depend on
 * bubblewrap (a private /tmp, "Read-only file system", bubblewrap removed from PATH) run on Linux only;
 * the pty package's sandbox-seatbelt-session.test.ts covers macOS.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CORPUS } from '@conch/policy/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';

const linux = process.platform === 'linux';

interface SessionInfo {
  session_id: string;
  sandbox?: { write: string[]; deny_read: string[]; network: unknown };
}

/** The spellings beyond the corpus, each aimed at `victim` in the cwd (or at its absolute path `$V`). */
const MORE_SPELLINGS: readonly string[] = [
  'env rm victim',
  'nice -n 1 rm victim',
  'nohup rm victim',
  'timeout 5 rm victim',
  'command rm victim',
  '\\rm victim',
  '/bin/rm -f victim',
  'sudo -n rm -f victim',
  'echo victim | xargs rm',
  'find . -name victim -delete',
  'rm -rf "$(pwd)"',
  'rm -f "$V"',
  'eval "$(echo cm0gdmljdGlt | base64 -d)"',
  'echo cm0gdmljdGlt | base64 -d | sh',
  'python3 -c "import os; os.remove(\'victim\')"',
  'perl -e \'unlink("victim") or die "$!\\n"\'',
  'echo pwned > victim',
  'truncate -s 0 victim',
  'mv victim moved',
  'cp /dev/null victim',
  'dd if=/dev/zero of=victim count=1 status=none',
  'chmod 000 victim',
  'ln -sf /etc/hostname victim',
  'rm victim & wait $!',
  '(sleep 0.1; rm victim) & wait $!',
];

async function session(h: ServerHandle, args: Record<string, unknown>): Promise<SessionInfo> {
  return h.ok<SessionInfo>('create_local', args);
}

describe.runIf(linux)('a sandboxed session under --sandbox, with no command policy', () => {
  let h: ServerHandle;
  let root: string;
  let work: string;
  let victimDir: string;
  let victim: string;
  let sid: string;

  const reset = () => writeFileSync(victim, 'intact\n');

  beforeAll(async () => {
    // Not under /tmp: a sandbox has a private /tmp, and the victim must be visible (read-only) inside.
    root = mkdtempSync(join(homedir(), '.conch-sandbox-test-'));
    work = join(root, 'work');
    victimDir = join(root, 'victim-dir');
    mkdirSync(work);
    mkdirSync(victimDir);
    victim = join(victimDir, 'victim');
    writeFileSync(join(victimDir, 'script.sh'), 'rm victim\n');
    reset();
    h = await startServer({ args: ['--sandbox', '--cwd', work] });
    sid = (await session(h, {})).session_id;
  });

  afterAll(async () => {
    await h?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** Runs `command` in the victim's directory (read-only in the sandbox) and returns the result. */
  async function attack(command: string): Promise<CommandResult> {
    let r = await h.call<CommandResult>('execute', {
      session_id: sid,
      command,
      cwd: victimDir,
      pause_timeout: 10,
      total_timeout: 30,
    });
    if (r.isError) {
      // The previous spelling ended the shell (exec): a new session, same server rules.
      sid = (await session(h, {})).session_id;
      r = await h.call<CommandResult>('execute', {
        session_id: sid,
        command,
        cwd: victimDir,
        pause_timeout: 10,
      });
    }
    const result = r.structured;
    if (result.status !== 'completed') {
      await h.call('kill_process', { command_id: result.command_id, grace_s: 0.5 });
    }
    if (result.session_ended) sid = (await session(h, {})).session_id;
    return result;
  }

  it('shows its rules: the cwd writable, secrets unreadable, no network', async () => {
    const listed = await h.ok<{ sessions: SessionInfo[] }>('list_sessions', {});
    const mine = listed.sessions.find((s) => s.session_id === sid);
    expect(mine?.sandbox?.write).toEqual([work]);
    expect(mine?.sandbox?.network).toBe('none');
    expect(mine?.sandbox?.deny_read.some((p) => p.endsWith('/.ssh'))).toBe(true);
  });

  it('writes in the cwd and /tmp, and keeps cwd and environment between commands', async () => {
    const r = await h.exec(
      'echo made > made.txt && export KEEP=yes && echo tmp > "$TMPDIR/t" && cat made.txt',
      {
        session_id: sid,
      },
    );
    expect(r).toMatchObject({ status: 'completed', exit_code: 0, output: 'made' });
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n');
    const again = await h.exec('echo "$KEEP $(cat "$TMPDIR/t") $(pwd)"', { session_id: sid });
    expect(again.output).toBe(`yes tmp ${work}`);
  });

  it('a plain rm of a file outside the writable paths fails with its exit code and a hint naming the rule', async () => {
    const r = await attack('rm victim');
    expect(r.status).toBe('completed');
    expect(r.exit_code).toBe(1);
    expect(r.output).toContain('Read-only file system');
    expect((r as CommandResult & { hint?: string }).hint).toBe(
      `${victim} is outside the sandbox's writable paths: ${work}, /tmp (private; $TMPDIR).`,
    );
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
  });

  it("every real bypass of the policy corpus leaves the victim intact and completes with bash's exit code", async () => {
    const attacks = CORPUS.filter((entry) => entry.deletes === true);
    expect(attacks.length).toBeGreaterThan(100);
    const failures: string[] = [];
    for (const entry of attacks) {
      const r = await attack(entry.command);
      if (r.status !== 'completed' || typeof r.exit_code !== 'number') {
        failures.push(`${entry.technique}: ${r.status} ${r.state} exit ${r.exit_code}`);
      }
      if (readFileSync(victim, 'utf8') !== 'intact\n') {
        failures.push(`${entry.technique}: the victim changed`);
        reset();
      }
    }
    expect(failures).toEqual([]);
  });

  it('wrappers, eval, a base64-decoded script, interpreters and background jobs fail the same way', async () => {
    await h.exec(`export V=${victim}`, { session_id: sid });
    const failures: string[] = [];
    for (const command of MORE_SPELLINGS) {
      const r = await attack(command);
      if (r.status !== 'completed' || typeof r.exit_code !== 'number' || r.exit_code === 0) {
        failures.push(`${command}: ${r.status} exit ${r.exit_code}`);
      }
      if (!existsSync(victim) || readFileSync(victim, 'utf8') !== 'intact\n') {
        failures.push(`${command}: the victim changed`);
        reset();
      }
    }
    expect(failures).toEqual([]);
  });

  it('a double fork and an isolated background command cannot reach it either', async () => {
    const marker = `double-fork-${Date.now()}`;
    const fork = await attack(
      `(setsid sh -c 'rm -f victim 2>/dev/null; echo "$? done" > "$TMPDIR/${marker}"' &)`,
    );
    expect(fork.status).toBe('completed');
    const seen = await h.exec(
      `for i in $(seq 200); do [ -s "$TMPDIR/${marker}" ] && break; sleep 0.05; done; cat "$TMPDIR/${marker}"`,
      { session_id: sid },
    );
    expect(seen.output).toBe('1 done');
    const bg = await h.call<CommandResult>('execute', {
      session_id: sid,
      command: 'rm victim; echo "rm said $?"',
      cwd: victimDir,
      background: true,
    });
    let done = bg.structured;
    let output = done.output;
    while (done.status !== 'completed') {
      done = await h.ok<CommandResult>('read_output', { command_id: done.command_id, pause_timeout: 5 });
      output += done.output;
    }
    expect(output).toContain('rm said 1');
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
  });

  it('the default session is sandboxed too', async () => {
    const r = await h.exec(`touch ${victimDir}/new-file`);
    expect(r.exit_code).toBe(1);
    expect(existsSync(join(victimDir, 'new-file'))).toBe(false);
  });
});

describe('deny_read and the network', () => {
  let h: ServerHandle;
  let root: string;
  let web: Server;
  let port: number;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'conch-sandbox-net-'));
    mkdirSync(join(root, 'secret'));
    writeFileSync(join(root, 'secret', 'token'), 'hunter2\n');
    web = createServer((_req, res) => res.end('hello from the host\n'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    port = (web.address() as AddressInfo).port;
    h = await startServer({ args: ['--cwd', root] });
  });

  afterAll(async () => {
    await h?.close();
    await new Promise((resolve) => web.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('a file under a deny_read path cannot be read', async () => {
    const s = await session(h, { sandbox: { deny_read: [join(root, 'secret')] } });
    expect(s.sandbox?.deny_read).toContain(join(root, 'secret'));
    const r = await h.exec(`cat ${join(root, 'secret', 'token')}`, { session_id: s.session_id });
    expect(r.exit_code).toBe(1);
    expect(r.output).not.toContain('hunter2');
    expect((r as CommandResult & { hint?: string }).hint).toContain('unreadable in the sandbox');
    const outside = await h.exec(`cat ${join(root, 'secret', 'token')}`);
    expect(outside.output).toBe('hunter2');
  });

  it('network none: a connection to a server on 127.0.0.1 fails', async () => {
    const s = await session(h, { sandbox: true });
    const r = await h.exec(`curl -sS -m 5 http://127.0.0.1:${port}/`, { session_id: s.session_id });
    expect(r.status).toBe('completed');
    expect(r.exit_code).toBe(7);
    expect((r as CommandResult & { hint?: string }).hint).toContain('no network');
    expect((await h.exec(`curl -sS -m 5 http://127.0.0.1:${port}/`)).output).toBe('hello from the host');
  });

  it('a host list: the listed host is reached through the proxy, another is refused', async () => {
    const s = await session(h, { sandbox: { network: ['127.0.0.1'] } });
    expect(s.sandbox?.network).toEqual(['127.0.0.1']);
    const ok = await h.exec(`curl -sS -m 5 http://127.0.0.1:${port}/`, { session_id: s.session_id });
    expect(ok).toMatchObject({ exit_code: 0, output: 'hello from the host' });
    const denied = await h.exec(`curl -fsS -m 5 http://localhost:${port}/`, { session_id: s.session_id });
    expect(denied.exit_code).toBe(22);
    expect(denied.output).toContain('403');
    // A program that ignores the proxy reaches nothing.
    const direct = await h.exec(`curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/`, {
      session_id: s.session_id,
    });
    expect(direct.exit_code).toBe(7);
  });
});

describe.runIf(linux)('failing closed', () => {
  it('with bubblewrap unavailable, create_local {sandbox:true} is SANDBOX_UNAVAILABLE and nothing runs', async () => {
    const h = await startServer({ env: { PATH: '/nonexistent' } });
    try {
      const before = (await h.ok<{ sessions: SessionInfo[] }>('list_sessions', {})).sessions.length;
      const r = await h.call('create_local', { sandbox: true, shell: '/bin/bash' });
      expect(r.isError).toBe(true);
      expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
      expect(r.error?.hint).toContain('apt-get install bubblewrap');
      expect((await h.ok<{ sessions: SessionInfo[] }>('list_sessions', {})).sessions.length).toBe(before);
    } finally {
      await h.close();
    }
  });

  it('with bubblewrap unavailable under --sandbox, the default session never runs unsandboxed', async () => {
    const h = await startServer({
      args: ['--sandbox', '--shell', '/bin/bash'],
      env: { PATH: '/nonexistent' },
    });
    try {
      const r = await h.call('execute', { command: 'echo ran' });
      expect(r.isError).toBe(true);
      expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
      expect(r.text).not.toContain('ran\n');
    } finally {
      await h.close();
    }
  });
});

describe('--sandbox-required', () => {
  let h: ServerHandle;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(homedir(), '.conch-sandbox-req-'));
    mkdirSync(join(root, 'sub'));
    h = await startServer({ args: ['--sandbox-required', '--cwd', root, '--sandbox-network', '127.0.0.1'] });
  });

  afterAll(async () => {
    await h?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses an unsandboxed session, a wider one, and SSH', async () => {
    for (const sandbox of [false, { write: ['/'] }, { network: 'all' }, { network: ['example.com'] }]) {
      const r = await h.call('create_local', { sandbox });
      expect(r.isError, JSON.stringify(sandbox)).toBe(true);
      expect(r.error?.code).toBe('POLICY_DENIED');
    }
    const outside = await h.call('create_local', { sandbox: true, cwd: '/' });
    expect(outside.error?.code).toBe('POLICY_DENIED');
    const ssh = await h.call('connect_ssh', { host: '127.0.0.1', port: 1 });
    expect(ssh.error?.code).toBe('POLICY_DENIED');
  });

  it("gives a session the server's sandbox, or a narrower one", async () => {
    const plain = await session(h, {});
    expect(plain.sandbox).toMatchObject({ write: [root], network: ['127.0.0.1'] });
    const narrower = await session(h, { cwd: join(root, 'sub'), sandbox: { network: 'none' } });
    expect(narrower.sandbox).toMatchObject({ write: [join(root, 'sub')], network: 'none' });
    const r = await h.exec(`touch ${root}/x`, { session_id: narrower.session_id });
    expect(r.exit_code).toBe(1);
  });
});
