// `pnpm bench` for @conch/bench: runs each benchmark in its own process, one after another, each with a
// time cap, then checks that nothing the run started is still alive (every process it started carries
// CONCH_BENCH_RUN in its environment) and that no process with CONCH_SESSION_ID is left from it.
// Results: the tables on stdout, and bench/results/latest.json.

import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, BENCH_RUN, processesOfRun, RESULTS_FILE, saveSection, sleep } from './lib.mjs';

/** `--quick` (or CONCH_BENCH_QUICK=1): the targets only, with fewer samples and a smaller flood. */
const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
const SCRIPTS = QUICK
  ? [
      ['start.mjs', 120, ['--quick']],
      ['targets.mjs', 300, ['--quick']],
    ]
  : [
      ['start.mjs', 240, []],
      ['targets.mjs', 720, []],
      ['round-trip.mjs', 180, []],
      ['mcp-round-trip.mjs', 150, []],
      ['sandbox.mjs', 180, []],
      ['memory.mjs', 400, []],
    ];

rmSync(RESULTS_FILE, { force: true });
const outcome = {};
let failed = 0;
for (const [script, capS, args] of SCRIPTS) {
  const t0 = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [join(BENCH_DIR, script), ...args], {
      cwd: BENCH_DIR,
      stdio: 'inherit',
      env: { ...process.env, CONCH_BENCH_RUN: BENCH_RUN },
    });
    const timer = setTimeout(() => {
      console.log(`\n${script}: killed after its ${capS} s cap`);
      child.kill('SIGKILL');
    }, capS * 1000);
    child.on('close', (c, signal) => {
      clearTimeout(timer);
      resolve(c ?? signal);
    });
  });
  const seconds = (performance.now() - t0) / 1000;
  outcome[script] = { code, seconds };
  if (code !== 0) failed++;
  console.log(`\n[${script}: ${code === 0 ? 'ok' : `FAILED (${code})`}, ${seconds.toFixed(1)} s]`);
}

// Leftovers: give exiting processes a moment, then kill and report whatever is still there.
let left = processesOfRun();
for (let i = 0; i < 20 && left.length > 0; i++) {
  await sleep(100);
  left = processesOfRun();
}
for (const p of left) {
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // gone
  }
}
if (left.length > 0) {
  failed++;
  console.log(
    `\nLEAK: ${left.length} process(es) started by this run were still alive and have been killed:`,
  );
  for (const p of left) console.log(`  ${p.pid}${p.conch ? ' (CONCH_SESSION_ID)' : ''} ${p.cmd}`);
} else {
  console.log('\nNo process started by this run is left (none with CONCH_SESSION_ID either).');
}
saveSection('run', { scripts: outcome, leftovers: left.length });
console.log(`Summary: ${RESULTS_FILE}`);
process.exit(failed > 0 ? 1 : 0);
