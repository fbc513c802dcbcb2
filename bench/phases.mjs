// Where the time of `execute true` goes, measured by the bench itself (targets.mjs prints it):
//   - the phases of each call: the client stamps its send and its receipt, conch-mcp stamps the phases of
//     the call on the server (CONCH_PHASE_TRACE, see packages/mcp/src/phase-trace-file.ts), all on the
//     wall clock of the same machine;
//   - the system calls per call of the server and of its shell (`strace -c`, attached to the running
//     processes for a batch of calls; skipped when strace is missing or may not attach).

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, sleep, stats, withCap } from './lib.mjs';

/** The intervals reported, each from one stamp to the next, with what happens in it. */
export const INTERVALS = [
  ['client → server', 'sent', 'received', "the client's request: JSON, the pipe, the server's wake-up"],
  ['dispatch', 'received', 'handler', 'the transport checks the line; the MCP SDK parses and dispatches it'],
  ['engine start', 'handler', 'typed', 'argument check, the command and its waiter are set up'],
  ['shell', 'typed', 'shell_done', 'the line to the terminal, bash runs `true`, its end marker read back'],
  ['result', 'shell_done', 'rendered', 'the result is built, checked against its schema, rendered as text'],
  ['reply', 'rendered', 'replying', "the SDK's output check, the reply's JSON"],
  [
    'server → client',
    'replying',
    'returned',
    "the reply's write, the client's wake-up, its parse and check of the reply",
  ],
];

/** The wall clock, in ms since the epoch, with the precision of performance.now(). */
export const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Matches the client's calls (`{ sent, returned }`, wall clock) with the server's phase marks (the file
 * CONCH_PHASE_TRACE wrote) and returns, per interval, the statistics of its duration in ms.
 */
export function phaseBreakdown(clientCalls, traceFile) {
  const { phases, marks } = JSON.parse(readFileSync(traceFile, 'utf8'));
  // One group per request line received: the marks until the next `received`.
  const groups = [];
  for (const [i, at] of marks) {
    const phase = phases[i];
    if (phase === 'received') groups.push({ received: at });
    else if (groups.length > 0) groups[groups.length - 1][phase] ??= at;
  }
  const rows = Object.fromEntries(INTERVALS.map(([name]) => [name, []]));
  const totals = [];
  let g = 0;
  for (const call of clientCalls) {
    while (g < groups.length && groups[g].received < call.sent - 0.05) g++;
    const group = groups[g];
    if (!group || group.received > call.returned) continue;
    g++;
    const at = { ...group, sent: call.sent, returned: call.returned };
    if (INTERVALS.some(([, from, to]) => at[from] === undefined || at[to] === undefined)) continue;
    for (const [name, from, to] of INTERVALS) rows[name].push(at[to] - at[from]);
    totals.push(call.returned - call.sent);
  }
  return {
    calls: totals.length,
    total: stats(totals),
    intervals: Object.fromEntries(
      INTERVALS.map(([name, from, to, what]) => [name, { from, to, what, ...stats(rows[name]) }]),
    ),
  };
}

/**
 * CPU time a process has used so far, all its threads together, in ms (from each thread's /proc/PID/task/TID/schedstat,
 * nanoseconds on the CPU), or undefined when /proc does not say.
 */
export function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return undefined;
  }
}

/** True when `strace` runs here and may attach to our own processes. */
export function straceUsable() {
  const r = spawnSync('strace', ['-c', '-o', '/dev/null', 'true'], { stdio: 'ignore' });
  return r.status === 0;
}

/**
 * Counts the system calls that `pids` (with their threads) make while `work()` runs, with one
 * `strace -f -c` per pid. Returns `{ [pid]: { syscall: calls } }`.
 */
export async function countSyscalls(pids, work, dir) {
  const tracers = pids.map((pid) => {
    const file = join(dir, `strace-${pid}.txt`);
    const child = spawn('strace', ['-f', '-c', '-o', file, '-p', String(pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    const attached = new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        if (/attached/.test(err)) resolve();
      });
      child.on('exit', (code) => reject(new Error(`strace -p ${pid} exited ${code}: ${err.trim()}`)));
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    return { pid, file, child, attached, exited };
  });
  try {
    await withCap(Promise.all(tracers.map((t) => t.attached)), 10_000, 'strace attach');
    // A moment for strace to attach to every thread of the process before the counted work starts.
    await sleep(200);
    await work();
  } finally {
    for (const t of tracers) if (t.child.exitCode === null) t.child.kill('SIGINT');
    await withCap(Promise.all(tracers.map((t) => t.exited)), 10_000, 'strace exit').catch(() => undefined);
    for (const t of tracers) if (t.child.pid && isAlive(t.child.pid)) t.child.kill('SIGKILL');
  }
  const out = {};
  for (const t of tracers) out[t.pid] = parseStraceSummary(readFileSync(t.file, 'utf8'));
  return out;
}

/** The `calls` column of `strace -c`'s table, by syscall. */
export function parseStraceSummary(text) {
  const counts = {};
  for (const line of text.split('\n')) {
    // % time, seconds, usecs/call, calls, [errors], syscall
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)\s*$/.exec(line);
    if (m && m[2] !== 'total') counts[m[2]] = Number(m[1]);
  }
  return counts;
}
