// Round trip of `echo hi` over MCP stdio (SDK Client + StdioClientTransport), conch-mcp side by side
// with the alternatives installed from npm (see servers.mjs), in one run: all servers are started,
// then the calls are interleaved round by round so that load on the machine hits them alike.
// A server that is missing, cannot start or fails a call is skipped with a message.
//
// Usage: node mcp-round-trip.mjs   (conch-mcp must be built: apps/mcp-server/dist/bin.cjs)

import { leakCheck, ms, ratio, saveSection, stats, table, tempDir, withCap } from './lib.mjs';
import { callShell, resultText, serverDefs, startServer, stopServer } from './servers.mjs';

const COMMAND = 'echo hi';
const MAX_ROUNDS = 200;
const MEASURE_MS = 20_000;
const WARMUP = 5;
const TOTAL_CAP_MS = 120_000;

const work = tempDir('conch-bench-mcp-');
const defs = serverDefs(work.dir);
const servers = [];
const skipped = [];
const samples = {};
const stops = {};

async function main() {
  for (const def of defs) {
    if (!def.available) {
      skipped.push([def.name, def.missing]);
      continue;
    }
    try {
      const server = await startServer(def);
      const first = await callShell(server, COMMAND, { capMs: 30_000 });
      if (!def.ok(first))
        throw new Error(
          `unexpected answer to ${COMMAND}: ${JSON.stringify(resultText(first)).slice(0, 200)}`,
        );
      servers.push(server);
    } catch (error) {
      skipped.push([def.name, error instanceof Error ? error.message : String(error)]);
    }
  }
  for (const s of servers) samples[s.def.name] = [];
  let live = [...servers];
  const call = async (s) => {
    const t0 = performance.now();
    const r = await callShell(s, COMMAND, { capMs: 30_000 });
    const dt = performance.now() - t0;
    if (!s.def.ok(r)) throw new Error(`unexpected answer: ${JSON.stringify(resultText(r)).slice(0, 200)}`);
    return dt;
  };
  const drop = (s, error) => {
    skipped.push([
      s.def.name,
      `failed during the run: ${error instanceof Error ? error.message : String(error)}`,
    ]);
    live = live.filter((x) => x !== s);
  };
  for (let i = 0; i < WARMUP; i++) {
    for (const s of [...live]) await call(s).catch((e) => drop(s, e));
  }
  const start = performance.now();
  for (
    let round = 0;
    round < MAX_ROUNDS && live.length > 0 && (round < 5 || performance.now() - start < MEASURE_MS);
    round++
  ) {
    const order = live.map((_, k) => live[(round + k) % live.length]);
    for (const s of order) {
      if (!live.includes(s)) continue;
      try {
        samples[s.def.name].push(await call(s));
      } catch (error) {
        drop(s, error);
      }
    }
  }
}

let failure;
try {
  await withCap(main(), TOTAL_CAP_MS, 'MCP round-trip benchmark');
} catch (error) {
  failure = error;
}
for (const s of servers) stops[s.def.name] = await stopServer(s);
const leaks = leakCheck(servers.filter((s) => s.def.name === 'conch-mcp').map((s) => s.pid));
work.remove();

const summary = {};
for (const s of servers) {
  summary[s.def.name] = { startMs: s.startMs, ...stats(samples[s.def.name] ?? []), stop: stops[s.def.name] };
}
const conch = summary['conch-mcp'];
const rows = servers.map((s) => {
  const r = summary[s.def.name];
  const st = stops[s.def.name];
  return [
    s.def.name,
    ms(r.startMs),
    `${ms(r.median)} / ${ms(r.p90)}`,
    ms(r.min),
    conch && s.def.name !== 'conch-mcp' ? ratio(conch.median, r.median) : '-',
    r.n,
    `${st.exitedOn}, ${ms(st.exitMs)} ms`,
    st.leftovers,
  ];
});
console.log(
  `\nMCP stdio round trip of \`${COMMAND}\`, ms (median / p90); ratio = conch-mcp / alternative, of medians (< 1 = conch faster)\n`,
);
console.log(
  table(
    ['server', 'start', 'round trip', 'min', 'conch/this', 'n', 'exited on (after close)', 'children left'],
    rows,
  ),
);
for (const s of servers) if (s.def.note) console.log(`  ${s.def.name}: ${s.def.note}`);
for (const [name, why] of skipped) console.log(`SKIPPED ${name}: ${why}`);
if (leaks.ours.length > 0) {
  console.log(
    `LEAK: ${leaks.ours.length} process(es) with CONCH_SESSION_ID survived conch-mcp and were killed: ${leaks.ours.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`,
  );
} else if (servers.some((s) => s.def.name === 'conch-mcp')) {
  console.log('No leftover processes with CONCH_SESSION_ID from conch-mcp.');
}
saveSection('mcpRoundTrip', {
  command: COMMAND,
  servers: summary,
  skipped: Object.fromEntries(skipped),
  leaks: leaks.ours.length,
});
if (failure) {
  console.error(`mcp-round-trip failed: ${failure instanceof Error ? failure.message : String(failure)}`);
  process.exitCode = 1;
}
if (leaks.ours.length > 0) process.exitCode = 1;
setTimeout(() => process.exit(), 200).unref();
