import { waitFor } from '@conch/core/testing';
import { pidsWithEnv } from '@conch/node/testing';
import { VERB_PARAMETERS } from '@conch/service';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliHome, connectDaemonMcp, createHome, isRunning } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
});

/** Live processes started by the daemon `pid` (their environment carries its owner tag). */
function processesOwnedBy(pid: number): number[] {
  return pidsWithEnv('CONCH_OWNER', (owner) => owner.startsWith(`conch-${pid}-`));
}

/** The command id named by the still-running hint on stderr. */
function stillRunningId(stderr: string): string {
  const match = /still running: (c_[a-z0-9]+)/.exec(stderr);
  if (!match?.[1]) throw new Error(`no still-running hint in: ${stderr}`);
  return match[1];
}

describe('conch exec through the daemon', () => {
  it('keeps cd and export between invocations (one default session in the daemon)', async () => {
    const first = await home.conch(['exec', '--', 'cd /tmp && export A=1']);
    expect(first.code).toBe(0);
    const second = await home.conch(['exec', '--', 'pwd; echo $A']);
    expect(second.code).toBe(0);
    expect(second.stdout.split('\n')).toEqual(expect.arrayContaining(['/tmp', '1']));
  });

  it("exits with the command's exit code", async () => {
    const run = await home.conch(['exec', '--', 'exit 3']);
    expect(run.code).toBe(3);
  });

  it('a partial result prints the id, exits 0 with a still-running hint, and conch read gets the rest', async () => {
    const run = await home.conch(['exec', '--pause', '0.5', '--', 'sleep 3; echo done']);
    expect(run.code).toBe(0);
    const id = stillRunningId(run.stderr);
    const read = await home.conch(['read', id, '--pause', '9', '--total', '20']);
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('done');
  });

  it('conch key ID ctrl+c ends a sleep', async () => {
    const run = await home.conch(['exec', '--pause', '0.5', '--', 'sleep 60']);
    const id = stillRunningId(run.stderr);
    const key = await home.conch(['key', id, 'ctrl+c', '--json']);
    const result = JSON.parse(key.stdout) as { status: string; state: string };
    expect(result.status).toBe('completed');
    expect(result.state).not.toBe('running');
  });

  it('usage errors exit 2 and conch errors exit 1 with the message', async () => {
    expect((await home.conch(['exec'])).code).toBe(2);
    expect((await home.conch(['no-such-command'])).code).toBe(2);
    const unknown = await home.conch(['read', 'c_nosuchid00']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('c_nosuchid00');
  });

  it('options that mirror a tool parameter take its range and default from the one table', async () => {
    const bad = await home.conch(['exec', '--pause', '5000', '--', 'true']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected seconds, a number from 0 to 3600 (default 9), got "5000".');
    const grace = await home.conch(['kill', 'c_nosuchid00', '--grace', '301']);
    expect(grace.code).toBe(2);
    expect(grace.stderr).toContain('from 0 to 300');
    const help = await home.conch(['exec', '--help']);
    // The table's words, then the default (commander wraps the help: compare with spaces collapsed).
    const words = VERB_PARAMETERS.execute.pause_timeout.description;
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`--pause <seconds> ${words} (default 9)`);
  });

  it('ps and sessions print tables; --json gives the structured result', async () => {
    await home.conch(['exec', '--background', '--', 'sleep 30']);
    const ps = await home.conch(['ps']);
    expect(ps.stdout).toMatch(/^ID\s+SESSION\s+PID\s+STATE/);
    expect(ps.stdout).toContain('sleep 30');
    const sessions = JSON.parse((await home.conch(['sessions', '--json'])).stdout) as {
      sessions: { session_id: string }[];
    };
    expect(sessions.sessions.map((s) => s.session_id)).toContain('default');
  });

  it('--session and close take a session name as well as an id', async () => {
    // A named session made over MCP in the same daemon (`conch mcp --daemon`), then used by name.
    const client = await connectDaemonMcp(home);
    const made = await client.callTool({ name: 'create_local', arguments: { name: 'work' } });
    const id = (made.structuredContent as { session_id: string }).session_id;
    await client.close();
    const cd = await home.conch(['exec', '--session', 'work', '--json', '--', 'cd /tmp']);
    expect(cd.code).toBe(0);
    expect((JSON.parse(cd.stdout) as { session_id: string }).session_id).toBe(id);
    const pwd = await home.conch(['exec', '--session', 'work', '--', 'pwd']);
    expect(pwd.stdout.trim()).toBe('/tmp');
    // The default session did not move.
    expect((await home.conch(['exec', '--', 'pwd'])).stdout.trim()).not.toBe('/tmp');
    const closed = await home.conch(['close', 'work']);
    expect(closed.code).toBe(0);
    const gone = await home.conch(['exec', '--session', 'work', '--', 'true']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('Invalid session_id: "work"');
  });
});

describe('the daemon', () => {
  it('socket 0600 in a 0700 directory; status, stop', async () => {
    await home.conch(['daemon', 'start']);
    const { statSync } = await import('node:fs');
    const dir = home.env.CONCH_HOME as string;
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(`${dir}/daemon.sock`).mode & 0o777).toBe(0o600);
    const status = JSON.parse((await home.conch(['daemon', 'status', '--json'])).stdout) as {
      running: boolean;
    };
    expect(status.running).toBe(true);
    expect((await home.conch(['daemon', 'stop'])).stdout).toContain('stopped');
    expect((await home.conch(['daemon', 'status'])).code).toBe(3);
  });

  it('after SIGKILL of the daemon the next command starts a new one and nothing the dead one started runs', async () => {
    // Commands that ignore SIGHUP: the end of their terminals does not end them, only the reaping does.
    await home.conch(['exec', '--background', '--', 'trap "" HUP; sleep 300']);
    await home.conch(['exec', '--pause', '0.5', '--', 'trap "" HUP; sleep 301; true']);
    const dead = home.daemonPid();
    expect(dead).toBeDefined();
    const started = processesOwnedBy(dead as number);
    // Both shells, the isolated command's wrapper, and both sleeps.
    expect(started.length).toBeGreaterThanOrEqual(4);
    process.kill(dead as number, 'SIGKILL');
    await waitFor(() => !isRunning(dead as number), { what: 'the daemon is dead' });
    const next = await home.conch(['exec', '--', 'echo alive']);
    expect(next.code).toBe(0);
    expect(next.stdout).toContain('alive');
    expect(home.daemonPid()).not.toBe(dead);
    try {
      await waitFor(() => processesOwnedBy(dead as number).length === 0, {
        what: "the dead daemon's processes are gone",
      });
    } finally {
      // Leave nothing behind even when the check fails.
      for (const pid of processesOwnedBy(dead as number)) process.kill(pid, 'SIGKILL');
    }
  });
});
