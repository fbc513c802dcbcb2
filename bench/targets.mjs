// The speed targets of conch-mcp, measured over MCP stdio in one run, side by side with the alternatives
// and the floors, as ratios (docs/performance.md):
//   1. `execute true` round trip: conch-mcp with an empty HOME and with a stock ~/.bashrc, the other MCP
//      servers, and the floors: the MCP floor (a no-op tool on a plain SDK McpServer, noop-mcp-server.mjs,
//      called by the same SDK client), the pipe floor (a JSON line to another node process and one back,
//      no SDK, no shell), a live bash in node-pty answering `true; printf MARK` with readline off (the
//      live-bash floor) and on, a `bash -c true` spawned per call via node-pty and via child_process.
//      Measured "cold" in rotating rounds (each candidate idle while the others run, as between an agent's
//      calls) and "warm" (calls back to back) for conch-mcp and the floors, with conch's overhead over the
//      MCP and live-bash floors together;
//   2. exit-to-return: `sleep 0.5`, the call's time beyond the 500 ms the command takes;
//   3. flood: `yes | head -c 200000000` through conch-mcp against the raw node-pty drain rate measured in
//      the same run, the server's peak RSS, and another session's `true` while the flood runs;
//   4. scale: 50 idle sessions (memory per session), then 30 of them sending `true` at the same moment,
//      over and over;
//   5. where the time of `execute true` goes: the phases of each call (the client's and the server's
//      stamps) for calls back to back and for calls with a 20 ms pause before each, side by side, and the
//      system calls per call of the server and of its shell (strace -c), see phases.mjs.
//
// Usage: node targets.mjs [--quick] [--only=round-trips,scale,flood,phases]
//        (conch-mcp must be built: apps/mcp-server/dist/bin.cjs)

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
  sampleBackToBack,
  sampleInterleaved,
  saveSection,
  sleep,
  stats,
  table,
  tempDir,
  withCap,
} from './lib.mjs';
import { countSyscalls, cpuMs, INTERVALS, phaseBreakdown, straceUsable, wallNow } from './phases.mjs';
import { mcpFloorDef, resultText, serverDefs, startServer, stopServer } from './servers.mjs';

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
/** Back-to-back ("warm") calls: blocks per candidate, calls kept per block (one more is made and dropped). */
const WARM_BLOCKS = QUICK ? 6 : 15;
const WARM_BLOCK = QUICK ? 20 : 40;
const SLEEP_ROUNDS = QUICK ? 3 : 8;
const SCALE_SESSIONS = 30;
const SCALE_ROUNDS = QUICK ? 8 : 30;
const IDLE_SESSIONS = 50;
const PROBE_EVERY_MS = 25;
/** Calls of `execute true` whose phases are stamped, and calls counted by strace. */
const PHASE_CALLS = QUICK ? 200 : 1000;
/** The pause before each call of the phases' second pass ("cold" calls, as between an agent's calls). */
const PAUSE_MS = 20;
const PAUSED_CALLS = QUICK ? 200 : 600;
const STRACE_CALLS = QUICK ? 100 : 300;
/** A candidate slower than this per call is sampled apart, SLOW_ROUNDS times. */
const SLOW_MS = 100;
const SLOW_ROUNDS = QUICK ? 3 : 10;
const TOTAL_CAP_MS = QUICK ? 270_000 : 690_000;
const MB = 1e6;

const work = tempDir('conch-bench-targets-');
const defs = serverDefs(work.dir);
const conchDef = defs.find((d) => d.name === 'conch-mcp');
/** The candidates that conch's overhead is measured against (names as printed). */
const CONCH = 'conch-mcp (empty HOME)';
const MCP_FLOOR = 'no-op tool on the SDK McpServer (MCP floor)';
const PIPE_FLOOR = 'JSON line over pipes, node to node (pipe floor)';
const BASH_FLOOR = 'live bash in node-pty, readline off (live-bash floor)';
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
  const started = {};
  for (const def of [{ ...conchDef, name: CONCH }, rc, ...defs.slice(1), mcpFloorDef(conchDef, MCP_FLOOR)]) {
    if (!def.available) {
      skipped.push([def.name, def.missing]);
      continue;
    }
    try {
      const s = await start(def);
      await timedCall(s, 'true');
      started[def.name] = s;
      candidates[def.name] = () => timedCall(s, 'true');
    } catch (error) {
      skipped.push([def.name, error instanceof Error ? error.message : String(error)]);
    }
  }
  const floors = {
    [PIPE_FLOOR]: 'pipeFloor',
    [BASH_FLOOR]: 'liveBashNoEdit',
    'live bash in node-pty, readline on': 'liveBash',
    'node-pty spawn bash -c': 'nodePtySpawn',
    'child_process spawn bash -c': 'childProcessSpawn',
  };
  for (const [name, kind] of Object.entries(floors)) candidates[name] = () => alt.time(kind, 'true');
  // A server that takes hundreds of ms a call (Desktop Commander) would leave the others few rounds: it
  // gets its own few rounds after the others.
  const slow = {};
  for (const [name, fn] of Object.entries(candidates)) {
    // The first call of a floor starts its process (the pipe's other end, the live bash): not timed.
    await fn();
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

  // Warm: the same calls back to back, in blocks per candidate (rotating order); the floors in the worker
  // make a block's calls there, without a message from this process in between.
  const timedCalls = (s) => async (n) => {
    const xs = [];
    for (let i = 0; i < n; i++) xs.push(await timedCall(s, 'true'));
    return xs;
  };
  const warmCandidates = {};
  for (const name of [CONCH, MCP_FLOOR])
    if (started[name] && !slow[name]) warmCandidates[name] = timedCalls(started[name]);
  warmCandidates[BASH_FLOOR] = (n) => alt.timeMany('liveBashNoEdit', 'true', n);
  warmCandidates[PIPE_FLOOR] = (n) => alt.timeMany('pipeFloor', 'true', n);
  const warm = await sampleBackToBack(warmCandidates, { blocks: WARM_BLOCKS, block: WARM_BLOCK });
  out.warm = Object.fromEntries(Object.entries(warm).map(([k, v]) => [k, stats(v)]));
  out.overhead = overheadOverFloors();

  // Exit-to-return: bash's $EPOCHREALTIME (no fork) stamps the moment `sleep` has exited; the call's
  // return is stamped on the same wall clock here.
  const exitToReturn = {};
  const sleepers = Object.fromEntries(
    servers
      .filter((s) => s.def.name !== rc.name && !s.def.floor)
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

/**
 * conch-mcp's median against the MCP floor plus the live-bash floor (what a call over MCP to a live shell
 * cannot go below), cold (the rotating rounds) and warm (back to back): the difference and the ratios.
 */
function overheadOverFloors() {
  const mode = (from) => {
    const conch = from?.[CONCH]?.median;
    const mcp = from?.[MCP_FLOOR]?.median;
    const bash = from?.[BASH_FLOOR]?.median;
    const pipe = from?.[PIPE_FLOOR]?.median;
    return {
      conch,
      mcpFloor: mcp,
      liveBashFloor: bash,
      pipeFloor: pipe,
      floors: mcp + bash,
      overMs: conch - (mcp + bash),
      ratioToFloors: conch / (mcp + bash),
      ratioToMcpFloor: conch / mcp,
      ratioToLiveBashFloor: conch / bash,
    };
  };
  return { cold: mode(out.roundTrip), warm: mode(out.warm) };
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
  const shellPids = descendants(server.pid);
  const cpuOf = () => ({
    client: process.cpuUsage(),
    server: cpuMs(server.pid),
    shell: shellPids.reduce((sum, pid) => sum + (cpuMs(pid) ?? Number.NaN), 0),
  });
  // Two passes on the same server: calls back to back, then calls with a pause before each (the
  // server's phase marks of both are in one trace file, matched to the client's calls by time).
  const pass = async (n, pauseMs) => {
    const calls = [];
    const cpu0 = cpuOf();
    for (let i = 0; i < n; i++) {
      if (pauseMs) await sleep(pauseMs);
      const sent = wallNow();
      await conchExecute(server, session, 'true');
      calls.push({ sent, returned: wallNow() });
    }
    const cpu1 = cpuOf();
    const clientUs = process.cpuUsage(cpu0.client);
    const cpu = {
      clientMs: (clientUs.user + clientUs.system) / 1000 / n,
      serverMs: (cpu1.server - cpu0.server) / n,
      shellMs: (cpu1.shell - cpu0.shell) / n,
    };
    return { calls, cpu };
  };
  const backToBack = await pass(PHASE_CALLS, 0);
  const paused = await pass(PAUSED_CALLS, PAUSE_MS);
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
  out.phases = {
    pauseMs: PAUSE_MS,
    backToBack: { ...phaseBreakdown(backToBack.calls, traceFile), cpu: backToBack.cpu },
    paused: { ...phaseBreakdown(paused.calls, traceFile), cpu: paused.cpu },
    syscalls,
  };
}

async function main() {
  if (!conchDef.available) throw new Error(conchDef.missing);
  const alt = startAltWorker(work.dir);
  try {
    // Each phase has its own cap, so that a slow one (the flood on a loaded machine) leaves the others'
    // results; what a timed-out phase started is stopped at the end.
    for (const [name, phase, capS] of [
      ['round trips', () => roundTrips(alt), QUICK ? 60 : 120],
      ['phases', () => breakdown(), QUICK ? 50 : 120],
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
const empty = out.roundTrip?.[CONCH];
if (out.roundTrip) {
  console.log(
    '\n`execute true` round trip over MCP stdio, cold (rotating rounds: each candidate idle while the others run), ms;\nconch/this = ratio of medians (< 1: conch faster)\n',
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
        empty && name !== CONCH ? ratio(empty.median, s.median) : '-',
        s.n,
      ]),
    ),
  );
  console.log(
    '  (the MCP floor is a server like the others, called by the same SDK client; the other floors run in a\n   separate clean process and time themselves, without MCP; both conch servers also source\n   /etc/bash.bashrc, as a login on this machine would)',
  );
}
if (out.warm) {
  console.log(
    `\nWarm (calls back to back, ${WARM_BLOCKS} blocks of ${WARM_BLOCK} per candidate in rotating order) and cold (the rotating rounds above), ms\n`,
  );
  console.log(
    table(
      ['candidate', 'warm median', 'warm p95', 'cold median', 'cold p95', 'cold/warm', 'n warm'],
      Object.entries(out.warm).map(([name, w]) => {
        const c = out.roundTrip?.[name];
        return [name, ms(w.median), ms(w.p95), ms(c?.median), ms(c?.p95), ratio(c?.median, w.median), w.n];
      }),
    ),
  );
  const o = out.overhead;
  console.log(
    "\nconch-mcp's overhead over the floors (medians, ms): what a call over MCP to a live shell cannot go below is the\nMCP floor (the SDK on both sides, the two processes' wake-ups) plus the live-bash floor (the shell's answer)\n",
  );
  console.log(
    table(
      [
        'mode',
        'conch-mcp',
        'MCP floor',
        'live-bash floor',
        'pipe floor',
        'conch − (MCP + bash)',
        'conch/(MCP + bash)',
        'conch/MCP floor',
      ],
      [
        ['cold (rotating rounds)', o.cold],
        ['warm (back to back)', o.warm],
      ].map(([mode, x]) => [
        mode,
        ms(x.conch),
        ms(x.mcpFloor),
        ms(x.liveBashFloor),
        ms(x.pipeFloor),
        ms(x.overMs),
        ratio(x.conch, x.floors),
        ratio(x.conch, x.mcpFloor),
      ]),
    ),
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
  const bb = ph.backToBack;
  const pz = ph.paused;
  console.log(
    `\nWhere the time of \`execute true\` goes (conch-mcp, empty HOME; ${bb.calls} calls back to back ("warm") and ${pz.calls} with a\n${ph.pauseMs} ms pause before each ("cold"); the client and the server stamp each phase on the same wall clock), ms\n`,
  );
  const row = (name, w, c, what) => [
    name,
    ms(w.median),
    ms(w.mean),
    ms(w.p95),
    ms(c.median),
    ms(c.mean),
    ms(c.p95),
    ratio(c.mean, w.mean),
    what,
  ];
  console.log(
    table(
      [
        'interval',
        'warm median',
        'warm mean',
        'warm p95',
        'cold median',
        'cold mean',
        'cold p95',
        'cold/warm',
        'what happens in it',
      ],
      [
        ...INTERVALS.map(([name]) =>
          row(name, bb.intervals[name], pz.intervals[name], bb.intervals[name].what),
        ),
        row('whole call', bb.total, pz.total, 'as the client sees it'),
      ],
      'lrrrrrrrl',
    ),
  );
  console.log(
    `\nCPU time per call (all threads, from /proc), warm → cold: the MCP client ${ms(bb.cpu.clientMs)} → ${ms(pz.cpu.clientMs)} ms, conch-mcp ${ms(bb.cpu.serverMs)} → ${ms(pz.cpu.serverMs)} ms, its shell ${ms(bb.cpu.shellMs)} → ${ms(pz.cpu.shellMs)} ms`,
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
  const remains = (label, b, floor, mcpFloor) => {
    const iv = b.intervals;
    const hops = iv['client → server'].mean + iv['server → client'].mean;
    const own = iv.dispatch.mean + iv['engine start'].mean + iv.result.mean + iv.reply.mean;
    return (
      `  ${label}: of the whole call's ${ms(b.total.mean)} ms (means, which add up), the shell's part ${ms(iv.shell.mean)} ms` +
      (floor ? ` (the live-bash floor ${ms(floor.median)})` : '') +
      `; the two MCP hops between the processes ${ms(hops)} ms; the server's own work on the call ${ms(own)} ms` +
      ` (its CPU per call ${ms(b.cpu.serverMs)} ms)` +
      (mcpFloor ? `; the MCP floor, a whole call to a no-op tool, ${ms(mcpFloor.median)} ms (median)` : '') +
      '.'
    );
  };
  console.log('\nWhat remains:');
  console.log(remains('warm', bb, out.warm?.[BASH_FLOOR], out.warm?.[MCP_FLOOR]));
  console.log(
    remains(`cold (${ph.pauseMs} ms pause)`, pz, out.roundTrip?.[BASH_FLOOR], out.roundTrip?.[MCP_FLOOR]),
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
    '`true` median back to back (information)',
    out.warm?.[CONCH] && `${ms(out.warm[CONCH].median)} ms`,
    out.warm?.[CONCH] ? 'info' : '-',
  ],
  [
    '`true` p95 back to back (information)',
    out.warm?.[CONCH] && `${ms(out.warm[CONCH].p95)} ms`,
    out.warm?.[CONCH] ? 'info' : '-',
  ],
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
if (empty && !(empty.median <= 1 && empty.p95 <= 2)) {
  const warmConch = out.warm?.[CONCH];
  const o = out.overhead;
  const closest = Math.min(
    empty.median,
    warmConch?.median ?? Infinity,
    ph?.backToBack.total.median ?? Infinity,
  );
  const floors =
    o && Number.isFinite(o.cold.floors)
      ? ` The floors in the same run: MCP floor + live-bash floor ${ms(o.warm.floors)} ms warm, ${ms(o.cold.floors)} ms cold (the MCP floor alone ${ms(o.warm.mcpFloor)} / ${ms(o.cold.mcpFloor)}); conch's own overhead over them ${ms(o.warm.overMs)} ms warm (${ratio(o.warm.conch, o.warm.floors)}), ${ms(o.cold.overMs)} ms cold (${ratio(o.cold.conch, o.cold.floors)}).`
      : '';
  console.log(
    `Round trip: closest reached ${ms(closest)} ms median (${ms(empty.median)} cold in the rotating rounds${warmConch ? `, ${ms(warmConch.median)} warm, back to back` : ''}).${floors} Where the rest goes: "Where the time of \`execute true\` goes" above${ph ? ` (the server's CPU per call ${ms(ph.backToBack.cpu.serverMs)} ms warm, ${ms(ph.paused.cpu.serverMs)} ms cold)` : ''} and docs/performance.md.`,
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
