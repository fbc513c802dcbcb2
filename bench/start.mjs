// How fast conch's binaries start, side by side with `node -e 0` (a Node process that does nothing), in
// rotating rounds, as ratios of medians (docs/performance.md, "Start"):
//   - `conch --version`: the CLI's start alone (target: at most 1.2 × node -e 0);
//   - `conch exec -- true` against a warm daemon: a short command from a script or a person (at most
//     1.5 × node -e 0);
//   - `conch-mcp`, spawn to the first result: the server spawned, `initialize` answered, then
//     `execute {command: "true"}` answered (at most 300 ms), with the time to the `initialize` answer.
// Each sample is one process, timed from spawn to exit (to the first result for conch-mcp). The CLI rows
// rotate with the floor; conch-mcp's starts run after them, apart. The built bins are used
// (apps/cli/dist/bin.cjs, apps/mcp-server/dist/bin.cjs, the packages' bins); the daemon runs in a private
// CONCH_HOME. The compile cache (in the private HOME) is written by the warm-up starts, as by a user's first
// start; the rows "no compile cache" are the same starts with NODE_DISABLE_COMPILE_CACHE=1, which is what
// the first start after an install or an upgrade costs (no target).
//
// Usage: node start.mjs [--quick]

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { mcpExchange } from '../scripts/mcp-exchange.mjs';
import {
  CONCH_MCP_BIN,
  ms,
  REPO_DIR,
  ratio,
  sampleInterleaved,
  saveSection,
  stats,
  table,
  tempDir,
} from './lib.mjs';

const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
const ROUNDS = QUICK ? 30 : 80;
const MCP_ROUNDS = QUICK ? 10 : 30;
const CONCH_BIN = join(REPO_DIR, 'apps', 'cli', 'dist', 'bin.cjs');
const FLOOR = 'node -e 0';
/** The targets, as ratios to the floor (or absolute ms for conch-mcp). */
const TARGETS = {
  'conch --version': { ratio: 1.2 },
  'conch exec -- true (warm daemon)': { ratio: 1.5 },
  'conch-mcp: spawn to first result': { ms: 300 },
};
/** The rows measured a second time without the compile cache (no target: an install's first start). */
const EXEC_ROW = 'conch exec -- true';
const MCP_ROW = 'conch-mcp: first result';

for (const bin of [CONCH_BIN, CONCH_MCP_BIN]) {
  if (!existsSync(bin)) {
    console.error(`${bin} is missing: build first (turbo run build).`);
    process.exit(1);
  }
}

const work = tempDir('conch-bench-start-');
const home = join(work.dir, 'home');
const conchHome = join(work.dir, 'conch-home');
mkdirSync(home);
const env = { ...process.env, HOME: home, CONCH_HOME: conchHome, NO_COLOR: '1' };

/** The environment of a start without the compile cache (the first start after an install or upgrade). */
const COLD = { ...env, NODE_DISABLE_COMPILE_CACHE: '1' };

/** Spawns `args` with node and resolves when it has exited (it must exit 0). */
function runNode(args, runEnv = env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: runEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

/** conch-mcp from spawn to its `initialize` answer and to the first `execute true` result, in ms. */
async function mcpFirstResult(runEnv = env) {
  const { results, times } = await mcpExchange({
    command: process.execPath,
    args: [CONCH_MCP_BIN],
    env: runEnv,
    requests: [{ method: 'tools/call', params: { name: 'execute', arguments: { command: 'true' } } }],
  });
  if (results[0]?.isError) throw new Error(`execute failed: ${JSON.stringify(results[0])}`);
  return { initialized: times[0], first: times[1] };
}

const out = { machine: { cpus: cpus().length, loadavgStart: loadavg() }, quick: QUICK };
const initializeTimes = [];
try {
  // The daemon, warm: started and used once before the rounds.
  await runNode([CONCH_BIN, 'exec', '--', 'true']);
  // The CLI against the floor, then the server apart: a server's start and shutdown (its shell, its
  // spill files) would otherwise land on whichever short process runs next.
  const samples = await sampleInterleaved(
    {
      [FLOOR]: () => runNode(['-e', '0']),
      'conch --version': () => runNode([CONCH_BIN, '--version']),
      'conch exec -- true (warm daemon)': () => runNode([CONCH_BIN, 'exec', '--', 'true']),
      [`${EXEC_ROW}, no compile cache`]: () => runNode([CONCH_BIN, 'exec', '--', 'true'], COLD),
    },
    { warmup: 3, minRounds: ROUNDS, maxRounds: ROUNDS },
  );
  Object.assign(
    samples,
    await sampleInterleaved(
      {
        'conch-mcp: spawn to first result': async () => {
          const { initialized, first } = await mcpFirstResult();
          initializeTimes.push(initialized);
          return first;
        },
        [`${MCP_ROW}, no compile cache`]: async () => (await mcpFirstResult(COLD)).first,
      },
      { warmup: 2, minRounds: MCP_ROUNDS, maxRounds: MCP_ROUNDS },
    ),
  );
  initializeTimes.splice(0, 2); // the warm-up starts
  const floor = stats(samples[FLOOR]);
  const rows = [];
  out.rows = {};
  for (const [name, xs] of Object.entries(samples)) {
    const s = stats(xs);
    const target = TARGETS[name];
    const r = name === FLOOR ? undefined : s.median / floor.median;
    const meets =
      target === undefined ? '' : target.ratio !== undefined ? r <= target.ratio : s.median <= target.ms;
    const targetText =
      target === undefined ? '' : target.ratio !== undefined ? `≤ ${target.ratio}×` : `≤ ${target.ms} ms`;
    rows.push([
      name,
      ms(s.median),
      ms(s.p95),
      ms(s.min),
      name === FLOOR ? '-' : ratio(s.median, floor.median),
      targetText,
      target === undefined ? '' : meets ? 'met' : 'MISSED',
      String(s.n),
    ]);
    out.rows[name] = { ...s, ratioToFloor: r, target, met: target === undefined ? undefined : meets };
  }
  const init = stats(initializeTimes);
  out.mcpInitialize = init;
  console.log(
    `\nStart of conch's binaries against ${FLOOR} (CLI: rotating rounds with the floor, ${ROUNDS} each; conch-mcp: ${MCP_ROUNDS} starts after them; each sample one process, spawn to exit), ms\n`,
  );
  console.log(table(['candidate', 'median', 'p95', 'min', 'x node -e 0', 'target', '', 'n'], rows));
  console.log(
    `  (conch-mcp: spawn to the initialize answer, median ${ms(init.median)} ms; then execute true. The daemon is warm;\n   the CLI and the server are the built bundles, apps/cli/dist/bin.cjs and apps/mcp-server/dist/bin.cjs;\n   "no compile cache": NODE_DISABLE_COMPILE_CACHE=1, an install's first start)`,
  );
} finally {
  spawnSync(process.execPath, [CONCH_BIN, 'daemon', 'stop'], { env, timeout: 15_000 });
  out.machine.loadavgEnd = loadavg();
  saveSection('start', out);
  work.remove();
}
