// Sandboxed sessions against unsandboxed ones, in one run, through conch's engine (docs/sandbox.md): the
// round trip of `true` and `/bin/true` on a persistent session, the isolated path (session busy: in a
// sandbox, the command joins the shell's namespaces), and session start (create_local + first `true`).
// Rounds are interleaved, so load from other processes hits both alike. Target: a sandboxed round trip
// at most 1.2× the unsandboxed one.
//
// Usage: node sandbox.mjs [--quick]   (needs the built @conch/core, @conch/pty and @conch/node, and bwrap)

import { homedir } from 'node:os';
import { resolveSandboxRules } from '@conch/core';
import { benchEngine, ms, ratio, runEngineBench, sampleInterleaved, stats, table } from './lib.mjs';

const QUICK = process.argv.includes('--quick') || process.env.CONCH_BENCH_QUICK === '1';
const BASH = '/bin/bash';
const CASE_MS = QUICK ? 3_000 : 8_000;
const MAX_ROUNDS = QUICK ? 100 : 400;
const START_ROUNDS = QUICK ? 8 : 20;

const engine = await benchEngine({
  prefix: 'conch-bench-sandbox-',
  defaults: { shell: BASH },
  limits: { maxSessions: 50 },
});
const { cwd, manager, run } = engine;
const rules = resolveSandboxRules(true, { home: homedir(), cwd });

async function start(sandboxed) {
  const t0 = performance.now();
  const s = await manager.createLocal(sandboxed ? { sandbox: rules } : {});
  await run(s.session_id, 'true');
  const took = performance.now() - t0;
  await manager.closeSession(s.session_id);
  return took;
}

async function main() {
  const plain = (await manager.createLocal({})).session_id;
  const boxed = (await manager.createLocal({ sandbox: rules })).session_id;
  const results = { commands: {} };
  for (const cmd of ['true', '/bin/true']) {
    const s = await sampleInterleaved(
      { unsandboxed: () => run(plain, cmd), sandboxed: () => run(boxed, cmd) },
      { warmup: 10, maxRounds: MAX_ROUNDS, maxMs: CASE_MS },
    );
    results.commands[cmd] = { unsandboxed: stats(s.unsandboxed), sandboxed: stats(s.sandboxed) };
  }
  // The isolated path: a busy shell (a foreground `sleep`), so `true` runs as its own process.
  const busyPlain = await manager.execute({ command: 'sleep 600', session_id: plain, pause_timeout: 0 });
  const busyBoxed = await manager.execute({ command: 'sleep 600', session_id: boxed, pause_timeout: 0 });
  const iso = await sampleInterleaved(
    { unsandboxed: () => run(plain, 'true'), sandboxed: () => run(boxed, 'true') },
    { warmup: 3, maxRounds: QUICK ? 20 : 60, maxMs: CASE_MS },
  );
  results.isolated = { unsandboxed: stats(iso.unsandboxed), sandboxed: stats(iso.sandboxed) };
  await manager.killProcess({ command_id: busyPlain.command_id, grace_s: 1 });
  await manager.killProcess({ command_id: busyBoxed.command_id, grace_s: 1 });
  const starts = await sampleInterleaved(
    { unsandboxed: () => start(false), sandboxed: () => start(true) },
    { warmup: 2, maxRounds: START_ROUNDS, minRounds: START_ROUNDS, maxMs: 0 },
  );
  results.sessionStart = { unsandboxed: stats(starts.unsandboxed), sandboxed: stats(starts.sandboxed) };

  const row = (label, pair) => [
    label,
    `${ms(pair.unsandboxed.median)} / ${ms(pair.unsandboxed.p90)}`,
    `${ms(pair.sandboxed.median)} / ${ms(pair.sandboxed.p90)}`,
    ratio(pair.sandboxed.median, pair.unsandboxed.median),
    pair.sandboxed.n,
  ];
  console.log('\nSandboxed sessions (bubblewrap) vs unsandboxed, interleaved rounds; median / p90');
  console.log(
    table(
      ['case', 'unsandboxed', 'sandboxed', 'sandboxed ÷ unsandboxed', 'n'],
      [
        row('`true` (persistent session)', results.commands.true),
        row('`/bin/true` (persistent session)', results.commands['/bin/true']),
        row('isolated `true` (session busy)', results.isolated),
        row('session start (create_local + first `true`)', results.sessionStart),
      ],
    ),
  );
  const target = results.commands.true.sandboxed.median / results.commands.true.unsandboxed.median;
  results.roundTripRatio = target;
  console.log(
    `\nTarget: sandboxed round trip of \`true\` ≤ 1.2× unsandboxed: ${target.toFixed(2)}× (${target <= 1.2 ? 'met' : 'MISSED'})`,
  );
  return results;
}

await runEngineBench(engine, { name: 'sandbox bench', section: 'sandbox', main, capMs: 150_000 });
