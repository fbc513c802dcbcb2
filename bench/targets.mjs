// The speed targets of conch-mcp, measured over MCP stdio in one run, side by side with the alternatives
// and the floors, as ratios (docs/performance.md):
//   1. `execute true` round trip: conch-mcp with an empty HOME and with a stock ~/.bashrc, the other MCP
//      servers, and the floors (a live bash in node-pty answering `true; printf MARK` with readline off and
//      on, a `bash -c true` spawned per call via node-pty and via child_process);
//   2. exit-to-return: `sleep 0.5`, the call's time beyond the 500 ms the command takes;
//   3. flood: `yes | head -c 200000000` through conch-mcp against the raw node-pty drain rate measured in
//      the same run, the server's peak RSS, and another session's `true` while the flood runs;
//   4. scale: 50 idle sessions (memory per session), then 30 of them sending `true` at the same moment,
//      over and over;
//   5. where the time of `execute true` goes: the phases of each call (the client's and the server's
//      stamps) and the system calls per call of the server and of its shell (strace -c), see phases.mjs.
//
// Usage: node targets.mjs [--quick] [--only=round-trips,scale,flood,phases]
//        (conch-mcp must be built: apps/mcp-server/dist/bin.js)

import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { startAltWorker } from './alt-client.mjs';
import {
  descendants,
  leakCheck,
  ms,
  procStatusBytes,
  ratio,
  sampleInterleaved,
  saveSection,
  sleep,
  stats,
  table,
  tempDir,
  withCap,
} from './lib.mjs';
import { countSyscalls, cpuMs, INTERVALS, phaseBreakdown, straceUsable, wallNow } from './phases.mjs';
import { resultText, serverDefs, startServer, stopServer } from './servers.mjs';

const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
/** `--only=a,b`: run only these phases (names as in {@link main}, spaces as dashes). */
const ONLY = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
/** Bytes of the flood: CONCH_BENCH_FLOOD_BYTES, else 200 MB (quick: 50 MB). */
const FLOOD_BYTES = Number(process.env.CONCH_BENCH_FLOOD_BYTES) || (QUICK ? 50_000_000 : 200_000_000);
const FLOOD = `yes | head -c ${FLOOD_BYTES}`;
const RT_ROUNDS = QUICK ? 60 : 300;
const RT_MS = QUICK ? 8_000 : 30_000;
const SLEEP_ROUNDS = QUICK ? 3 : 8;
const SCALE_SESSIONS = 30;
const SCALE_ROUNDS = QUICK ? 8 : 30;
const IDLE_SESSIONS = 50;
const PROBE_EVERY_MS = 25;
/** Calls of `execute true` whose phases are stamped, and calls counted by strace. */
const PHASE_CALLS = QUICK ? 200 : 1000;
const STRACE_CALLS = QUICK ? 100 : 300;
/** A candidate slower than this per call is sampled apart, SLOW_ROUNDS times. */
const SLOW_MS = 100;
const SLOW_ROUNDS = QUICK ? 3 : 10;
const TOTAL_CAP_MS = QUICK ? 260_000 : 680_000;
const MB = 1e6;

const work = tempDir('conch-bench-targets-');
const defs = serverDefs(work.dir);
const conchDef = defs.find((d) => d.name === 'conch-mcp');
const servers = [];
const skipped = [];
const conchPids = [];
const out = {
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memGb: Math.round(totalmem() / 1e9),
    loadavgStart: loadavg(),
  },
  quick: QUICK,
};

/** A HOME with a stock ~/.bashrc (Debian's /etc/skel one where present). */
function rcHome() {
  const home = join(work.dir, 'rc-home');
  mkdirSync(home, { recursive: true });
  if (existsSync('/etc/skel/.bashrc')) copyFileSync('/etc/skel/.bashrc', join(home, '.bashrc'));
  else
    writeFileSync(
      join(home, '.bashrc'),
      'case $- in *i*) ;; *) return;; esac\nHISTCONTROL=ignoreboth\nshopt -s histappend checkwinsize\nPS1="\\u@\\h:\\w\\$ "\nalias ll="ls -alF"\n',
    );
  return home;
}

async function start(def) {
  const server = await startServer(def);
  servers.push(server);
  if (def.name.startsWith('conch')) conchPids.push(server.pid);
  return server;
}

/** Calls conch's execute on a given session. */
async function conchExecute(server, session_id, command, timeoutS) {
  const r = await server.client.callTool(
    {
      name: 'execute',
      arguments: {
        command,
        session_id,
        ...(timeoutS ? { pause_timeout: timeoutS, total_timeout: timeoutS } : {}),
      },
    },
    undefined,
    { timeout: ((timeoutS ?? 30) + 30) * 1000 },
  );
  if (r.isError || r.structuredContent?.status !== 'completed')
    throw new Error(`conch ${command}: ${resultText(r).split('\n')[0].slice(0, 200)}`);
  return r;
}

async function newSession(server) {
  const r = await server.client.callTool({ name: 'create_local', arguments: { shell: '/bin/bash' } });
  const id = r.structuredContent?.session_id;
  if (r.isError || typeof id !== 'string') throw new Error(`create_local: ${resultText(r).slice(0, 200)}`);
  return id;
}

/** A tool call of any server; throws on an error result. */
async function call(server, command, timeoutS) {
  const r = await server.client.callTool(
    { name: server.def.tool, arguments: server.def.run(command, { timeoutS }, server.ctx) },
    undefined,
    { timeout: 60_000 },
  );
  if (r.isError) throw new Error(`${server.def.name} ${command}: ${resultText(r).slice(0, 200)}`);
  return r;
}

/** {@link call}, timed in ms. */
async function timedCall(server, command, timeoutS) {
  const t0 = performance.now();
  await call(server, command, timeoutS);
  return performance.now() - t0;
}

/** Proportional set size (shared pages split among sharers) of a process, in bytes. */
function pss(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------------------------------------

async function roundTrips(alt) {
  const rc = { ...conchDef, name: 'conch-mcp (stock ~/.bashrc)', env: { ...conchDef.env, HOME: rcHome() } };
  const candidates = {};
  for (const def of [{ ...conchDef, name: 'conch-mcp (empty HOME)' }, rc, ...defs.slice(1)]) {
    if (!def.available) {
      skipped.push([def.name, def.missing]);
      continue;
    }
    try {
      const s = await start(def);
      await timedCall(s, 'true');
      candidates[def.name] = () => timedCall(s, 'true');
    } catch (error) {
      skipped.push([def.name, error instanceof Error ? error.message : String(error)]);
    }
  }
  const floors = {
    'live bash in node-pty, readline off (floor)': 'liveBashNoEdit',
    'live bash in node-pty, readline on': 'liveBash',
    'node-pty spawn bash -c': 'nodePtySpawn',
    'child_process spawn bash -c': 'childProcessSpawn',
  };
  for (const [name, kind] of Object.entries(floors)) candidates[name] = () => alt.time(kind, 'true');
  // A server that takes hundreds of ms a call (Desktop Commander) would leave the others few rounds: it
  // gets its own few rounds after the others.
  const slow = {};
  for (const [name, fn] of Object.entries(candidates)) {
    const t0 = performance.now();
    await fn();
    if (performance.now() - t0 > SLOW_MS) {
      slow[name] = fn;
      delete candidates[name];
    }
  }
  const samples = await sampleInterleaved(candidates, { warmup: 10, maxRounds: RT_ROUNDS, maxMs: RT_MS });
  const slowSamples = await sampleInterleaved(slow, {
    warmup: 1,
    maxRounds: SLOW_ROUNDS,
    minRounds: SLOW_ROUNDS,
  });
  out.roundTrip = Object.fromEntries(
    Object.entries({ ...samples, ...slowSamples }).map(([k, v]) => [k, stats(v)]),
  );

  // Exit-to-return: bash's $EPOCHREALTIME (no fork) stamps the moment `sleep` has exited; the call's
  // return is stamped on the same wall clock here.
  const exitToReturn = {};
  const sleepers = Object.fromEntries(
    servers
      .filter((s) => s.def.name !== rc.name)
      .map((s) => [
        s.def.name,
        async () => {
          const t0 = performance.now();
          const r = await call(s, 'sleep 0.5; echo "exited at $EPOCHREALTIME"', 10);
          const returned = performance.timeOrigin + performance.now();
          const m = /exited at (\d+)[.,](\d+)/.exec(resultText(r));
          if (m) {
            const exited = Number(m[1]) * 1000 + Number(`0.${m[2]}`) * 1000;
            exitToReturn[s.def.name] = [...(exitToReturn[s.def.name] ?? []), returned - exited];
          }
          return performance.now() - t0;
        },
      ]),
  );
  const sleeps = await sampleInterleaved(sleepers, {
    warmup: 1,
    maxRounds: SLEEP_ROUNDS,
    minRounds: SLEEP_ROUNDS,
  });
  out.sleep = Object.fromEntries(
    Object.entries(sleeps).map(([k, v]) => [
      k,
      { beyond500: stats(v.map((x) => x - 500)), exitToReturn: stats(exitToReturn[k] ?? []) },
    ]),
  );
  for (const s of [...servers]) {
    await stopServer(s);
    servers.splice(servers.indexOf(s), 1);
  }
}

async function flood(alt) {
  const drainBefore = await alt.run('ptyDrain', String(FLOOD_BYTES), 300_000);
  const server = await start({ ...conchDef, name: 'conch-mcp (flood)' });
  const floodSession = await newSession(server);
  const probeSession = await newSession(server);
  for (let i = 0; i < 5; i++) await conchExecute(server, probeSession, 'true');
  const rssBefore = procStatusBytes(server.pid, 'VmRSS');
  let done = false;
  const t0 = performance.now();
  const floodCall = conchExecute(server, floodSession, FLOOD, 280).finally(() => {
    done = true;
  });
  // Awaited below; but when the phase is abandoned (its time cap, a failed probe), the server is stopped and
  // this call rejects later with nobody waiting: that must not end the whole run.
  floodCall.catch(() => {});
  // One probe every PROBE_EVERY_MS (back-to-back probes would compete with the flood for the CPU).
  const probes = [];
  while (!done) {
    const p0 = performance.now();
    await conchExecute(server, probeSession, 'true');
    if (!done) probes.push(performance.now() - p0);
    await sleep(PROBE_EVERY_MS);
  }
  const r = await floodCall;
  const floodMs = performance.now() - t0;
  const hwm = procStatusBytes(server.pid, 'VmHWM');
  const drainAfter = await alt.run('ptyDrain', String(FLOOD_BYTES), 300_000);
  const rawMs = (drainBefore.ms + drainAfter.ms) / 2;
  out.flood = {
    bytes: FLOOD_BYTES,
    conchMs: floodMs,
    conchMBps: FLOOD_BYTES / MB / (floodMs / 1000),
    rawPtyMs: [drainBefore.ms, drainAfter.ms],
    rawPtyMBps: FLOOD_BYTES / MB / (rawMs / 1000),
    ratioToRaw: rawMs / floodMs,
    rssBeforeMb: (rssBefore ?? 0) / MB,
    peakRssMb: (hwm ?? 0) / MB,
    bytesSeen: r.structuredContent?.output_info?.bytes_total,
    exitCode: r.structuredContent?.exit_code,
    probes: stats(probes),
  };
  await stopServer(server);
  servers.splice(servers.indexOf(server), 1);
}

async function scale() {
  const server = await start({ ...conchDef, name: 'conch-mcp (scale)' });
  const first = await newSession(server);
  await conchExecute(server, first, 'true');
  await sleep(500);
  const serverBefore = procStatusBytes(server.pid, 'VmRSS') ?? 0;
  const sessions = [first];
  for (let i = 1; i <= IDLE_SESSIONS; i++) {
    const id = await newSession(server);
    await conchExecute(server, id, 'true');
    sessions.push(id);
  }
  await sleep(500);
  const serverAfter = procStatusBytes(server.pid, 'VmRSS') ?? 0;
  const shells = descendants(server.pid);
  const shellPss = shells.map(pss).filter((x) => x !== undefined);
  const shellRss = shells.map((p) => procStatusBytes(p, 'VmRSS')).filter((x) => x !== undefined);
  out.idle = {
    sessions: IDLE_SESSIONS,
    serverRssBeforeMb: serverBefore / MB,
    serverRssAfterMb: serverAfter / MB,
    serverPerSessionMb: (serverAfter - serverBefore) / MB / IDLE_SESSIONS,
    shellProcesses: shells.length,
    shellPssMeanMb: shellPss.reduce((a, b) => a + b, 0) / Math.max(1, shellPss.length) / MB,
    shellRssMeanMb: shellRss.reduce((a, b) => a + b, 0) / Math.max(1, shellRss.length) / MB,
  };
  const burst = sessions.slice(1, 1 + SCALE_SESSIONS);
  const latencies = [];
  const rounds = [];
  for (let round = 0; round < SCALE_ROUNDS + 2; round++) {
    const r0 = performance.now();
    const times = await Promise.all(
      burst.map(async (id) => {
        const t0 = performance.now();
        await conchExecute(server, id, 'true');
        return performance.now() - t0;
      }),
    );
    if (round >= 2) {
      latencies.push(...times);
      rounds.push(performance.now() - r0);
    }
  }
  out.scale = {
    sessions: SCALE_SESSIONS,
    rounds: SCALE_ROUNDS,
    calls: stats(latencies),
    round: stats(rounds),
  };
  await stopServer(server);
  servers.splice(servers.indexOf(server), 1);
}

async function breakdown() {
  const traceFile = join(work.dir, 'phases.json');
  const server = await start({
    ...conchDef,
    name: 'conch-mcp (phases)',
    env: { ...conchDef.env, CONCH_PHASE_TRACE: traceFile },
  });
  const session = await newSession(server);
  for (let i = 0; i < 20; i++) await conchExecute(server, session, 'true');
  const calls = [];
  const shellPids = descendants(server.pid);
  const cpuOf = () => ({
    client: process.cpuUsage(),
    server: cpuMs(server.pid),
    shell: shellPids.reduce((sum, pid) => sum + (cpuMs(pid) ?? Number.NaN), 0),
  });
  const cpu0 = cpuOf();
  for (let i = 0; i < PHASE_CALLS; i++) {
    const sent = wallNow();
    await conchExecute(server, session, 'true');
    calls.push({ sent, returned: wallNow() });
  }
  const cpu1 = cpuOf();
  const clientUs = process.cpuUsage(cpu0.client);
  const cpu = {
    clientMs: (clientUs.user + clientUs.system) / 1000 / PHASE_CALLS,
    serverMs: (cpu1.server - cpu0.server) / PHASE_CALLS,
    shellMs: (cpu1.shell - cpu0.shell) / PHASE_CALLS,
  };
  let syscalls;
  if (straceUsable()) {
    const shells = descendants(server.pid);
    try {
      const counts = await countSyscalls(
        [server.pid, ...shells],
        async () => {
          for (let i = 0; i < STRACE_CALLS; i++) await conchExecute(server, session, 'true');
        },
        work.dir,
      );
      const perCall = (pids) => {
        const sum = {};
        for (const pid of pids)
          for (const [name, n] of Object.entries(counts[pid] ?? {})) sum[name] = (sum[name] ?? 0) + n;
        return Object.fromEntries(
          Object.entries(sum)
            .map(([name, n]) => [name, n / STRACE_CALLS])
            .sort((a, b) => b[1] - a[1]),
        );
      };
      syscalls = { calls: STRACE_CALLS, server: perCall([server.pid]), shell: perCall(shells) };
    } catch (error) {
      skipped.push(['syscall counts', error instanceof Error ? error.message : String(error)]);
    }
  } else {
    skipped.push(['syscall counts', 'strace is not installed or may not attach to processes here']);
  }
  await stopServer(server);
  servers.splice(servers.indexOf(server), 1);
  out.phases = { ...phaseBreakdown(calls, traceFile), cpu, syscalls };
}

async function main() {
  if (!conchDef.available) throw new Error(conchDef.missing);
  const alt = startAltWorker(work.dir);
  try {
    // Each phase has its own cap, so that a slow one (the flood on a loaded machine) leaves the others'
    // results; what a timed-out phase started is stopped at the end.
    for (const [name, phase, capS] of [
      ['round trips', () => roundTrips(alt), QUICK ? 60 : 120],
      ['phases', () => breakdown(), QUICK ? 40 : 90],
      ['scale', () => scale(), QUICK ? 60 : 90],
      // 200 MB through a terminal takes about a minute per pass here when the machine is quiet (three passes:
      // raw, conch, raw); a loaded machine needs more.
      ['flood', () => flood(alt), QUICK ? 90 : 360],
    ]) {
      if (ONLY && !ONLY.includes(name.replace(/ /g, '-'))) continue;
      try {
        await withCap(phase(), capS * 1000, `the ${name} phase`);
      } catch (error) {
        skipped.push([name, error instanceof Error ? error.message : String(error)]);
      }
    }
  } finally {
    await alt.close();
  }
}

let failure;
try {
  await withCap(main(), TOTAL_CAP_MS, 'targets benchmark');
} catch (error) {
  failure = error;
}
for (const s of servers) await stopServer(s);
const leaks = leakCheck(conchPids);
work.remove();
out.machine.loadavgEnd = loadavg();

// ------------------------------------------------------------------------------------------------
// Report

const m = out.machine;
console.log(
  `\nMachine: ${m.cpus} × ${m.cpuModel}, ${m.memGb} GB, Node ${process.version}; load average at start ${m.loadavgStart.map((x) => x.toFixed(1)).join(' ')}, at end ${m.loadavgEnd.map((x) => x.toFixed(1)).join(' ')}${QUICK ? ' (quick mode)' : ''}`,
);
const empty = out.roundTrip?.['conch-mcp (empty HOME)'];
if (out.roundTrip) {
  console.log(
    '\n`execute true` round trip over MCP stdio, ms; conch/this = ratio of medians (< 1: conch faster)\n',
  );
  console.log(
    table(
      ['candidate', 'median', 'p95', 'p99', 'min', 'conch/this', 'n'],
      Object.entries(out.roundTrip).map(([name, s]) => [
        name,
        ms(s.median),
        ms(s.p95),
        ms(s.p99),
        ms(s.min),
        empty && !name.startsWith('conch-mcp (empty') ? ratio(empty.median, s.median) : '-',
        s.n,
      ]),
    ),
  );
  console.log(
    '  (the floors run in a separate clean process and time themselves, without MCP; both conch servers\n   also source /etc/bash.bashrc, as a login on this machine would)',
  );
}
if (out.sleep) {
  console.log(
    "\n`sleep 0.5; echo $EPOCHREALTIME`: exit-to-return (from the moment `sleep` exited, stamped by bash, to the\ncall's return) and the whole call beyond 500 ms (start, fork/exec of sleep, exit-to-return), ms\n",
  );
  console.log(
    table(
      ['server', 'exit-to-return median', 'p99', 'beyond 500 ms median', 'n'],
      Object.entries(out.sleep).map(([name, s]) => [
        name,
        ms(s.exitToReturn.median),
        ms(s.exitToReturn.p99),
        ms(s.beyond500.median),
        s.beyond500.n,
      ]),
    ),
  );
}
const f = out.flood;
if (f) {
  console.log(
    `\nFlood \`${FLOOD}\`: conch-mcp ${(f.conchMs / 1000).toFixed(2)} s (${f.conchMBps.toFixed(0)} MB/s), raw node-pty drain ${f.rawPtyMs.map((x) => (x / 1000).toFixed(2)).join(' / ')} s (${f.rawPtyMBps.toFixed(0)} MB/s): conch at ${(100 * f.ratioToRaw).toFixed(0)}% of raw; peak RSS ${f.peakRssMb.toFixed(0)} MB (before ${f.rssBeforeMb.toFixed(0)} MB); another session's \`true\` during it: median ${ms(f.probes.median)}, p99 ${ms(f.probes.p99)} ms (n=${f.probes.n})`,
  );
}
const idle = out.idle;
if (idle) {
  console.log(
    `\n${idle.sessions} idle sessions: server RSS ${idle.serverRssBeforeMb.toFixed(0)} → ${idle.serverRssAfterMb.toFixed(0)} MB (${idle.serverPerSessionMb.toFixed(2)} MB per session), plus one bash each: PSS ${idle.shellPssMeanMb.toFixed(2)} MB (RSS ${idle.shellRssMeanMb.toFixed(2)} MB, shared pages counted in full)`,
  );
}
const sc = out.scale;
if (sc) {
  console.log(
    `${sc.sessions} sessions sending \`true\` at the same moment, ${sc.rounds} rounds: per call median ${ms(sc.calls.median)}, p99 ${ms(sc.calls.p99)} ms; whole round median ${ms(sc.round.median)} ms`,
  );
}
const ph = out.phases;
if (ph) {
  console.log(
    `\nWhere the time of \`execute true\` goes (conch-mcp, empty HOME, ${ph.calls} calls one after another; the client and\nthe server stamp each phase on the same wall clock), ms\n`,
  );
  console.log(
    table(
      ['interval', 'median', 'mean', 'p95', 'what happens in it'],
      [
        ...INTERVALS.map(([name]) => {
          const s = ph.intervals[name];
          return [name, ms(s.median), ms(s.mean), ms(s.p95), s.what];
        }),
        ['whole call', ms(ph.total.median), ms(ph.total.mean), ms(ph.total.p95), 'as the client sees it'],
      ],
    ),
  );
  console.log(
    `\nCPU time per call (all threads, from /proc): the MCP client ${ms(ph.cpu.clientMs)} ms, conch-mcp ${ms(ph.cpu.serverMs)} ms, its shell ${ms(ph.cpu.shellMs)} ms`,
  );
  const sys = ph.syscalls;
  if (sys) {
    const fmt = (counts) =>
      Object.entries(counts)
        .filter(([, n]) => n >= 0.05)
        .map(([name, n]) => `${name} ${n.toFixed(n >= 10 ? 0 : 1)}`)
        .join(', ');
    const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(
      `\nSystem calls per \`execute true\` (strace -f -c, ${sys.calls} calls):\n  server (all threads) ${total(sys.server).toFixed(1)}: ${fmt(sys.server)}\n  its shell ${total(sys.shell).toFixed(1)}: ${fmt(sys.shell)}`,
    );
  }
  const floor = out.roundTrip?.['live bash in node-pty, readline off (floor)'];
  const iv = ph.intervals;
  const hops = iv['client → server'].mean + iv['server → client'].mean;
  const own = iv.dispatch.mean + iv['engine start'].mean + iv.result.mean + iv.reply.mean;
  console.log(
    `\nWhat remains (means, which add up to the whole call's ${ms(ph.total.mean)} ms): the shell's part ${ms(iv.shell.mean)} ms` +
      (floor ? ` (a live bash in node-pty answers \`true\` in ${ms(floor.median)} ms, median)` : '') +
      `; the two MCP hops between the processes ${ms(hops)} ms; the server's own work on the call ${ms(own)} ms` +
      ` (its CPU time per call, all threads: ${ms(ph.cpu.serverMs)} ms).`,
  );
}
const e2r = out.sleep?.['conch-mcp (empty HOME)']?.exitToReturn;
const check = (value, ok) => (value === undefined || Number.isNaN(value) ? '-' : ok ? 'met' : 'NOT met');
const targets = [
  [
    '`true` median ≤ 1 ms (empty HOME)',
    empty && `${ms(empty.median)} ms`,
    check(empty?.median, empty?.median <= 1),
  ],
  ['`true` p95 ≤ 2 ms (empty HOME)', empty && `${ms(empty.p95)} ms`, check(empty?.p95, empty?.p95 <= 2)],
  [
    'exit-to-return < 5 ms (`sleep 0.5`), median',
    out.sleep && `${ms(e2r?.median)} ms`,
    check(e2r?.median, e2r?.median < 5),
  ],
  [
    'flood ≥ 80% of raw node-pty',
    f && `${(100 * f.ratioToRaw).toFixed(0)}%`,
    check(f?.ratioToRaw, f?.ratioToRaw >= 0.8),
  ],
  ['flood peak RSS < 200 MB', f && `${f.peakRssMb.toFixed(0)} MB`, check(f?.peakRssMb, f?.peakRssMb < 200)],
  [
    "other session's `true` during the flood p99 < 50 ms",
    f && `${ms(f.probes.p99)} ms`,
    check(f?.probes.p99, f?.probes.p99 < 50),
  ],
  [
    '30 sessions at once, p99 < 30 ms',
    sc && `${ms(sc.calls.p99)} ms`,
    check(sc?.calls.p99, sc?.calls.p99 < 30),
  ],
  [
    '50 idle sessions: memory per session',
    idle &&
      `${idle.serverPerSessionMb.toFixed(2)} MB server + ${idle.shellPssMeanMb.toFixed(2)} MB bash (PSS)`,
    'stated',
  ],
];
console.log('\nTargets\n');
console.log(table(['target', 'measured', ''], targets));
if (empty && ph && !(empty.median <= 1 && empty.p95 <= 2)) {
  console.log(
    `Round trip: closest reached ${ms(Math.min(empty.median, ph.total.median))} ms median (${ms(empty.median)} in the rotating rounds, ${ms(ph.total.median)} one call after another); what remains is in "Where the time of \`execute true\` goes" above: the server's CPU per call (${ms(ph.cpu.serverMs)} ms) is the longest link of the chain, spread over the MCP SDK's layers, conch's schema checks, the engine's bookkeeping and the garbage collector (docs/performance.md).`,
  );
}
for (const [name, why] of skipped) console.log(`SKIPPED ${name}: ${why}`);
if (leaks.ours.length > 0) {
  console.log(
    `LEAK: ${leaks.ours.length} process(es) with CONCH_SESSION_ID survived conch-mcp and were killed: ${leaks.ours.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`,
  );
} else {
  console.log('No leftover processes with CONCH_SESSION_ID from conch-mcp.');
}
saveSection('targets', { ...out, targets, skipped: Object.fromEntries(skipped), leaks: leaks.ours.length });
if (failure) {
  console.error(`targets failed: ${failure instanceof Error ? failure.stack : String(failure)}`);
  process.exitCode = 1;
}
if (leaks.ours.length > 0) process.exitCode = 1;
setTimeout(() => process.exit(), 200).unref();
