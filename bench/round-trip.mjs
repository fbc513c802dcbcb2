// Round trip of a trivial command through conch's engine on a persistent local session, side by side
// with the no-session alternatives (a fresh `bash -c CMD` per command via node-pty and via
// child_process) and with the floor (a live bash in node-pty answering with a prompt marker: what a
// persistent session costs before any engine work). Also conch's isolated path (execute while the
// session is busy: a new PTY per command) and the background start.
//
// Usage: node round-trip.mjs   (needs the built @conch/core, @conch/pty and @conch/node; `pnpm bench`
// builds them). Each case is capped in samples and time; everything started is killed at the end.

import { readdirSync } from 'node:fs';
import { startAltWorker } from './alt-client.mjs';
import {
  benchEngine,
  ms,
  procStatusBytes,
  ratio,
  runEngineBench,
  sample,
  sampleInterleaved,
  stats,
  table,
} from './lib.mjs';

const BASH = '/bin/bash';
const COMMANDS = ['true', '/bin/true', 'echo hi'];
const CASE_MS = 6_000;
const MAX_ROUNDS = 300;
const TOTAL_CAP_MS = 150_000;

const engine = await benchEngine({ prefix: 'conch-bench-rt-', defaults: { shell: BASH } });
const { cwd, manager, run } = engine;

// ------------------------------------------------------------------------------------------------
// Alternatives run in a clean worker process (alt-worker.mjs), which times them itself: a process
// that holds conch's engine state (retained commands with open spill files, timers) spawns slower.

const worker = startAltWorker(cwd);
const alt = worker.time;

// ------------------------------------------------------------------------------------------------

// A session of its own (random id) rather than "default": conch kills escaped processes by their
// CONCH_SESSION_ID when a session closes, and every conch engine's default session has the same id.
let sessionId;
const conchRun = async (cmd) => {
  await run(sessionId, cmd);
};

async function main() {
  const results = { commands: {}, extra: {}, rssMb: {} };
  const rss = (label) => {
    results.rssMb[label] = Math.round((procStatusBytes('self', 'VmRSS') ?? 0) / 1e6);
  };
  rss('before');

  // Session start: open a session and run a first command in it.
  const t0 = performance.now();
  sessionId = (await manager.createLocal({ shell: BASH, cwd })).session_id;
  const first = await run(sessionId, 'echo hi');
  const sessionStartMs = performance.now() - t0;
  if (!first.output.includes('hi'))
    throw new Error(`conch: echo hi returned ${JSON.stringify(first.output)}`);

  for (const cmd of COMMANDS) {
    const s = await sampleInterleaved(
      {
        conch: () => conchRun(cmd),
        liveBashFloor: () => alt('liveBash', cmd),
        nodePtySpawn: () => alt('nodePtySpawn', cmd),
        childProcessSpawn: () => alt('childProcessSpawn', cmd),
      },
      { warmup: 10, maxRounds: MAX_ROUNDS, maxMs: CASE_MS * 2 },
    );
    results.commands[cmd] = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, stats(v)]));
  }

  rss('after foreground commands');
  // Isolated path: the session is busy with a foreground command, so each execute gets its own PTY.
  const busy = await manager.execute({
    command: 'sleep 120',
    session_id: sessionId,
    pause_timeout: 0.2,
    total_timeout: 1,
  });
  if (busy.status !== 'partial') throw new Error(`conch: sleep 120 returned ${busy.status} (${busy.reason})`);
  try {
    const isolated = [];
    let sawIsolated = false;
    const samples = await sample(
      async () => {
        const r = await run(sessionId, 'true');
        if (r.isolated) sawIsolated = true;
        isolated.push(r);
      },
      { warmup: 3, maxSamples: 100, maxMs: CASE_MS },
    );
    if (!sawIsolated) throw new Error('conch: execute while busy did not take the isolated path');
    results.extra.isolatedTrue = stats(samples);
  } finally {
    await manager.killProcess({ command_id: busy.command_id, signal: 'SIGKILL' });
  }

  rss('after isolated commands');
  // Background start: a command that exits at once, and one that keeps running (returns after the probe).
  results.extra.backgroundTrue = stats(
    await sample(
      async () => {
        const r = await manager.execute({ command: 'true', session_id: sessionId, background: true });
        if (r.exit_code !== 0 && r.reason !== 'background')
          throw new Error(`conch: background true → ${r.reason}`);
      },
      { warmup: 2, maxSamples: 40, maxMs: CASE_MS },
    ),
  );
  const sleepers = [];
  results.extra.backgroundSleep = stats(
    await sample(
      async () => {
        const r = await manager.execute({ command: 'sleep 120', session_id: sessionId, background: true });
        sleepers.push(r.command_id);
        if (r.reason !== 'background') throw new Error(`conch: background sleep → ${r.reason}`);
      },
      { warmup: 1, maxSamples: 8, minSamples: 3, maxMs: CASE_MS },
    ),
  );
  for (const id of sleepers) await manager.killProcess({ command_id: id, signal: 'SIGKILL' });
  rss('after background commands');

  // ----------------------------------------------------------------------------------------------
  // Report
  const rows = [];
  for (const cmd of COMMANDS) {
    const r = results.commands[cmd];
    rows.push([
      cmd,
      `${ms(r.conch.median)} / ${ms(r.conch.p90)}`,
      `${ms(r.liveBashFloor.median)} / ${ms(r.liveBashFloor.p90)}`,
      `${ms(r.nodePtySpawn.median)} / ${ms(r.nodePtySpawn.p90)}`,
      `${ms(r.childProcessSpawn.median)} / ${ms(r.childProcessSpawn.p90)}`,
      ratio(r.conch.median, r.nodePtySpawn.median),
      ratio(r.conch.median, r.childProcessSpawn.median),
      ratio(r.conch.median, r.liveBashFloor.median),
      r.conch.n,
    ]);
  }
  console.log(
    `\nRound trip of a trivial command, ms (median / p90); ratios are of medians, conch / alternative (< 1 = conch faster)\n`,
  );
  console.log(
    table(
      [
        'command',
        'conch session',
        'live bash (floor)',
        'node-pty bash -c',
        'child_process bash -c',
        'conch/node-pty',
        'conch/child_proc',
        'conch/floor',
        'n',
      ],
      rows,
    ),
  );
  const npt = results.commands.true.nodePtySpawn.median;
  const cps = results.commands.true.childProcessSpawn.median;
  const x = results.extra;
  console.log(`\nOther conch paths, ms (median / p90); ratios vs spawning \`bash -c true\`\n`);
  console.log(
    table(
      ['case', 'conch', 'vs node-pty spawn', 'vs child_process spawn', 'n'],
      [
        [
          'session start (create_local + first echo hi)',
          ms(sessionStartMs),
          ratio(sessionStartMs, npt),
          ratio(sessionStartMs, cps),
          1,
        ],
        [
          'isolated `true` (session busy)',
          `${ms(x.isolatedTrue.median)} / ${ms(x.isolatedTrue.p90)}`,
          ratio(x.isolatedTrue.median, npt),
          ratio(x.isolatedTrue.median, cps),
          x.isolatedTrue.n,
        ],
        [
          'background `true`',
          `${ms(x.backgroundTrue.median)} / ${ms(x.backgroundTrue.p90)}`,
          ratio(x.backgroundTrue.median, npt),
          ratio(x.backgroundTrue.median, cps),
          x.backgroundTrue.n,
        ],
        [
          'background `sleep 120` (returns after probe)',
          `${ms(x.backgroundSleep.median)} / ${ms(x.backgroundSleep.p90)}`,
          '-',
          '-',
          x.backgroundSleep.n,
        ],
      ],
    ),
  );
  console.log(`\n(conch probe for background commands: ${manager.defaults.backgroundProbeMs} ms)`);
  const fds = (() => {
    try {
      return readdirSync('/proc/self/fd').length;
    } catch {
      return undefined;
    }
  })();
  const phases = Object.entries(results.rssMb)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `(RSS of this process, MB: ${phases}; ${fds} open fds at the end, ${manager.listCommands({ include_finished: true }).processes.length} commands retained)`,
  );
  results.openFds = fds;
  results.sessionStartMs = sessionStartMs;
  results.backgroundProbeMs = manager.defaults.backgroundProbeMs;
  return results;
}

await runEngineBench(engine, {
  name: 'round-trip',
  section: 'roundTrip',
  main,
  capMs: TOTAL_CAP_MS,
  stop: () => worker.close(),
  ownerPids: [process.pid, worker.pid],
});
