// Benchmark of the process facts on their hot paths, `/proc` side by side with the portable `ps` (run
// `pnpm --filter @conch/pty build` first; `pnpm bench` does). In interleaved rounds, per call:
// - prompt evidence: the facts about a terminal's foreground group (a shell blocked in `read`) and the
//   decision, as every quiet probe of a waiting call asks them;
// - foreground programs: the names of the foreground group, as the typed-input policy asks them;
// - kill targets: the process table and the environment markers a kill_process reads, twice per kill;
// - escaped-process scan: one scan for what ended commands left (list_processes scans until it settles);
// - a whole kill of a command's tree (three processes, one double-forked away) with its wait for the end.
// Medians and p90 in ms, and ps / proc as a ratio. Nothing is left running.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { decideInputWait } from '@conch/core';
import { foregroundGroupOf } from '@conch/core/host';
import { ProcProcessFacts, PsProcessFacts } from '@conch/node';
import nodePty from '@lydell/node-pty';
import { collectTargets, killTree } from '../dist/index.js';

const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
const ROUNDS = QUICK ? 15 : 60;
const KILL_ROUNDS = QUICK ? 4 : 12;
const facts = { proc: new ProcProcessFacts(), ps: new PsProcessFacts() };
const OWNER = `conch-bench-facts-${process.pid}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A shell blocked reading its terminal, on a real pseudo-terminal. */
const reader = nodePty.spawn('/bin/bash', ['--norc', '--noprofile', '-c', 'read x'], {
  name: 'xterm-256color',
  cols: 80,
  rows: 24,
  env: { ...process.env, CONCH_OWNER: OWNER },
});
reader.onData(() => {});
const tty = reader.ptsName;
for (let i = 0; i < 200; i++) {
  if (decideInputWait(await facts.proc.inputWait(reader.pid, tty)) === 'blocked_read') break;
  await sleep(10);
}

/** A marked command: a group of sleeps and a double-forked escaped process, all carrying its id. */
function startTree(id) {
  const child = spawn('/bin/sh', ['-c', '(setsid sleep 300 &); sleep 301 & sleep 302'], {
    env: { ...process.env, CONCH_OWNER: OWNER, CONCH_COMMAND_ID: id },
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  return child.pid;
}

async function waitTree(id, n) {
  for (let i = 0; i < 500; i++) {
    const found = await collectTargets(facts.proc, { roots: [], groups: [], commandId: id, owner: OWNER });
    if (found.length >= n) return;
    await sleep(10);
  }
  throw new Error(`the tree of ${id} did not start`);
}

const cases = {
  'prompt evidence': async (f) => {
    const evidence = decideInputWait(await f.inputWait(reader.pid, tty));
    if (evidence !== 'blocked_read') throw new Error(`evidence ${evidence}`);
  },
  'foreground programs': async (f) => {
    const fg = foregroundGroupOf(reader.pid, await f.processes());
    const names = await f.programNames(fg?.members.map((p) => p.pid) ?? []);
    if (!names.includes('bash')) throw new Error(`names ${names}`);
  },
  'kill targets': async (f) => {
    await collectTargets(f, { roots: [reader.pid], groups: [reader.pid], commandId: 'c_none', owner: OWNER });
  },
  'escaped-process scan': async (f) => {
    await Promise.all([f.processes(), f.markers(['CONCH_COMMAND_ID', 'CONCH_OWNER'])]);
  },
};

const samples = {};
for (const name of [...Object.keys(cases), 'whole kill']) samples[name] = { proc: [], ps: [] };
for (const name of Object.keys(cases)) for (const kind of ['proc', 'ps']) await cases[name](facts[kind]);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    for (const kind of round % 2 === 0 ? ['proc', 'ps'] : ['ps', 'proc']) {
      const t0 = performance.now();
      await run(facts[kind]);
      samples[name][kind].push(performance.now() - t0);
    }
  }
}
for (let round = 0; round < KILL_ROUNDS; round++) {
  for (const kind of round % 2 === 0 ? ['proc', 'ps'] : ['ps', 'proc']) {
    const id = `c_benchkill_${process.pid}_${round}_${kind}`;
    const root = startTree(id);
    await waitTree(id, 4);
    const t0 = performance.now();
    const report = await killTree(
      facts[kind],
      { roots: [root], groups: [root], commandId: id, owner: OWNER },
      'SIGTERM',
      2000,
    );
    samples['whole kill'][kind].push(performance.now() - t0);
    if (report.result !== 'killed') throw new Error(`kill ${JSON.stringify(report)}`);
  }
}
reader.kill('SIGKILL');

const quantile = (list, q) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const fmt = (n) => n.toFixed(2).padStart(9);
console.log('\nProcess facts per call on the hot paths (ms; median, p90), /proc side by side with ps\n');
console.log(
  `${'call'.padEnd(22)}${'proc med'.padStart(9)}${'p90'.padStart(9)}${'ps med'.padStart(9)}${'p90'.padStart(9)}  ps / proc`,
);
const results = {};
for (const [name, { proc, ps }] of Object.entries(samples)) {
  const row = {
    proc: { median: quantile(proc, 0.5), p90: quantile(proc, 0.9) },
    ps: { median: quantile(ps, 0.5), p90: quantile(ps, 0.9) },
  };
  results[name] = row;
  console.log(
    `${name.padEnd(22)}${fmt(row.proc.median)}${fmt(row.proc.p90)}${fmt(row.ps.median)}${fmt(row.ps.p90)}  ${(row.ps.median / row.proc.median).toFixed(1).padStart(8)}x`,
  );
}
const processCount = (await facts.proc.processes()).length;
console.log(`\n(${processCount} processes on this host; ${ROUNDS} rounds, ${KILL_ROUNDS} kills each)`);
