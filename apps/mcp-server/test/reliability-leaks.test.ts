/**
 * Reliability: leaks, behind each of the server's doors (stdio, the daemon's socket, the relay: see
 * targets.ts). The built server runs 1000 mixed commands (foreground, background, killed, and
 * calls the client cancels) in four sessions at once; afterwards its open file descriptors, terminals and
 * child processes are back to their baseline and its resident memory is stable. Each resource not back
 * to its baseline counts into `.reliability/leaks.json`.
 */
import { waitFor } from '@conch/core/testing';
import { openFds, processTree, procStatusKb, writeReliabilityReport } from '@conch/node/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';
import { TARGETS } from './targets.js';

const COMMANDS = 1000;
const SESSIONS = 4;
let leaks = 0;
let h: ServerHandle | undefined;

afterAll(async () => {
  await h?.close();
  writeReliabilityReport('leaks', { leaks });
});

/** What the server holds: open fds, terminal fds among them, live child processes, resident memory. */
function usage(pid: number) {
  const fds = openFds(pid);
  return {
    fds: fds.length,
    ptys: fds.filter((t) => t === '/dev/ptmx' || t.startsWith('/dev/pts/')).length,
    children: processTree(pid).length - 1,
    rssKb: procStatusKb(pid, 'VmRSS') ?? 0,
  };
}

/** One command of the mix (index `i`) in `session`; resolves once it has ended. */
async function one(server: ServerHandle, session: string, i: number): Promise<void> {
  const kind = i % 10;
  // Follows a command to its end; `output` is all of its text (each call returns only what is new, and a
  // background command's first result may already hold it all while its end is not yet seen).
  const until = async (r: CommandResult) => {
    let out = r;
    let text = r.output;
    while (out.status !== 'completed') {
      out = await server.ok<CommandResult>('read_output', { command_id: r.command_id, total_timeout: 30 });
      text += out.output;
    }
    return { ...out, output: text };
  };
  if (kind < 6) {
    const r = await until(await server.exec(`echo leak-${i}`, { session_id: session }));
    expect(r.output).toBe(`leak-${i}`);
  } else if (kind === 6) {
    const r = await until(await server.exec(`echo bg-${i}`, { session_id: session, background: true }));
    expect(r.output).toBe(`bg-${i}`);
  } else if (kind === 7) {
    const r = await server.exec('sleep 60', { session_id: session, background: true });
    const killed = await server.ok<{ result: string }>('kill_process', {
      command_id: r.command_id,
      grace_s: 1,
    });
    expect(killed.result).toBe('killed');
  } else if (kind === 8) {
    const r = await server.exec('sleep 60', { session_id: session, pause_timeout: 0.05 });
    expect(r.status).toBe('partial');
    const killed = await server.ok<{ result: string }>('kill_process', {
      command_id: r.command_id,
      grace_s: 1,
    });
    expect(killed.result).toBe('killed');
  } else {
    // The client gives up on the call: the wait ends, the command runs on and ends by itself.
    const controller = new AbortController();
    const call = server.call(
      'execute',
      { command: 'sleep 0.2; echo cancelled-run', session_id: session },
      {
        signal: controller.signal,
      },
    );
    setTimeout(() => controller.abort(), 20);
    await call.catch(() => undefined);
    await waitFor(
      async () => {
        const rows = (
          await server.ok<{ processes: { state: string }[] }>('list_processes', {
            session_id: session,
            include_finished: false,
          })
        ).processes;
        return rows.length === 0;
      },
      { what: 'the cancelled command to end' },
    );
  }
}

describe.each(TARGETS)('leaks (%s)', (target) => {
  test(`after ${COMMANDS} mixed commands, fds, terminals and children are back to baseline, memory stable`, async () => {
    await h?.close();
    const server = await startServer({ target });
    h = server;
    const sessions = [
      'default',
      ...(await Promise.all(
        Array.from(
          { length: SESSIONS - 1 },
          async () => (await server.ok<{ session_id: string }>('create_local')).session_id,
        ),
      )),
    ];
    const round = async (count: number, offset: number) =>
      Promise.all(
        sessions.map(async (session, s) => {
          for (let i = s; i < count; i += sessions.length) await one(server, session, offset + i);
        }),
      );
    // Warm-up: every kind of command, and enough ended ones to fill the kept history (200).
    await round(250, 0);
    const settled = async () =>
      waitFor(() => (usage(server.pid).children === sessions.length ? true : undefined), {
        what: 'only the session shells left',
      });
    await settled();
    const base = usage(server.pid);
    await round(COMMANDS, 250);
    await settled();
    // Closing fds and reaping children may lag the last answer a little: wait for the baseline.
    const after = await waitFor(
      () => {
        const u = usage(server.pid);
        return u.fds <= base.fds && u.ptys <= base.ptys ? u : undefined;
      },
      { timeoutMs: 10_000, what: 'fds back to the baseline' },
    ).catch(() => usage(server.pid));
    const rssStable = after.rssKb <= base.rssKb * 1.5 + 32 * 1024;
    const found =
      Math.max(0, after.fds - base.fds) +
      Math.max(0, after.ptys - base.ptys) +
      Math.max(0, after.children - base.children) +
      (rssStable ? 0 : 1);
    leaks += found;
    expect(after.fds, 'open fds').toBeLessThanOrEqual(base.fds);
    expect(after.ptys, 'terminal fds').toBeLessThanOrEqual(base.ptys);
    expect(after.children, 'child processes').toBeLessThanOrEqual(base.children);
    expect(rssStable, `RSS ${base.rssKb} kB → ${after.rssKb} kB`).toBe(true);
    expect(found).toBe(0);
    await server.close();
  }, 600_000);
});
