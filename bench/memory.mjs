// Peak memory while `yes | head -c 200000000` (200 MB of output) runs to completion: the peak RSS
// (VmHWM from /proc/<pid>/status) of the conch MCP server, side by side with the alternatives (if they
// survive), each in a fresh process. When conch-mcp is not built, conch's engine in a child process
// stands in for it. A naive reference that keeps all output (child_process.exec, maxBuffer ∞) is
// measured too. Every case is capped in time; what a server started is killed at the end.
//
// Usage: node memory.mjs

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  BENCH_DIR,
  descendants,
  isAlive,
  leakCheck,
  procStatusBytes,
  ratio,
  saveSection,
  sleep,
  table,
  tempDir,
  withCap,
} from './lib.mjs';
import { callShell, resultText, serverDefs, startServer, stopServer } from './servers.mjs';

const FLOOD = 'yes | head -c 200000000';
const CASE_CAP_S = 150;
/** Desktop Commander returns at once and keeps the process running: wait at most this long for it. */
const DC_WAIT_S = 40;
const MB = 1e6;

const work = tempDir('conch-bench-mem-');
const defs = serverDefs(work.dir);
const rows = [];
const results = {};
const skipped = [];
const conchPids = [process.pid];

/** Samples VmRSS of `pid` every 200 ms (a floor for the peak if the process dies before VmHWM is read). */
function watch(pid) {
  const w = { maxRss: 0, died: false };
  const timer = setInterval(() => {
    const rss = procStatusBytes(pid, 'VmRSS');
    if (rss === undefined || !isAlive(pid)) w.died = true;
    else w.maxRss = Math.max(w.maxRss, rss);
  }, 200);
  w.stop = () => clearInterval(timer);
  return w;
}

function runChild(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(BENCH_DIR, 'engine-flood.mjs'), ...args], {
      cwd: work.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    conchPids.push(child.pid);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), (CASE_CAP_S + 15) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()));
      } catch {
        resolve({ error: `exit ${code ?? signal}: ${err.trim().split('\n').slice(-2).join(' | ')}` });
      }
    });
  });
}

async function measureServer(def) {
  const server = await startServer(def);
  if (def.name === 'conch-mcp') conchPids.push(server.pid);
  try {
    await callShell(server, 'echo hi', { capMs: 30_000 });
    const rssBefore = procStatusBytes(server.pid, 'VmRSS');
    const w = watch(server.pid);
    const t0 = performance.now();
    let answer;
    let note = '';
    try {
      if (def.name === 'desktop-commander') {
        // start_process returns after its timeout with the process still running: wait for it to end.
        answer = await callShell(server, FLOOD, { timeoutS: 2, capMs: 60_000 });
        const deadline = Date.now() + DC_WAIT_S * 1000;
        while (Date.now() < deadline && isAlive(server.pid) && descendants(server.pid).length > 0)
          await sleep(200);
        if (descendants(server.pid).length > 0) note = `command still running after the ${DC_WAIT_S} s cap`;
      } else {
        answer = await callShell(server, FLOOD, { timeoutS: CASE_CAP_S, capMs: (CASE_CAP_S + 10) * 1000 });
      }
    } catch (error) {
      note = error instanceof Error ? error.message : String(error);
    }
    const seconds = (performance.now() - t0) / 1000;
    w.stop();
    const hwm = procStatusBytes(server.pid, 'VmHWM');
    let survived = isAlive(server.pid) && !w.died ? 'yes' : 'died';
    if (survived === 'yes') {
      // Does it still answer?
      const probe = await callShell(server, 'echo hi', { capMs: 10_000 }).catch((e) => e);
      if (probe instanceof Error || !def.ok(probe)) survived = 'alive, no answer to echo hi in 10 s';
    }
    const text = answer ? resultText(answer) : '';
    const sc = answer?.structuredContent;
    const conchOutcome =
      sc && typeof sc.status === 'string'
        ? `${sc.status} (${sc.reason}), exit ${sc.exit_code ?? '-'}, ${sc.output_info?.bytes_total ?? '?'} bytes seen, ${text.length} chars returned`
        : undefined;
    const outcome =
      conchOutcome ??
      (answer?.isError
        ? `error: ${text.replace(/\s+/g, ' ').slice(0, 90)}`
        : answer
          ? `ok, ${text.length} chars returned`
          : 'no answer');
    return {
      rssBefore,
      peak: hwm ?? w.maxRss,
      peakFromHwm: hwm !== undefined,
      seconds,
      survived,
      outcome,
      note,
    };
  } finally {
    await stopServer(server);
  }
}

async function main() {
  for (const def of defs) {
    if (!def.available) {
      skipped.push([def.name, def.missing]);
      continue;
    }
    try {
      const r = await withCap(measureServer(def), (CASE_CAP_S + 60) * 1000, `${def.name} memory`);
      results[def.name] = r;
    } catch (error) {
      skipped.push([def.name, error instanceof Error ? error.message : String(error)]);
    }
  }
  if (!results['conch-mcp']) {
    const r = await runChild(['conch', FLOOD, String(CASE_CAP_S)]);
    if (r.error) skipped.push(['conch engine (child process)', r.error]);
    else
      results['conch engine (no MCP)'] = {
        rssBefore: r.before.rss,
        peak: r.hwm,
        peakFromHwm: true,
        seconds: r.ms / 1000,
        survived: 'yes',
        outcome: `${r.result.status} ${r.result.reason}, exit ${r.result.exit_code}, ${r.result.outputChars} chars returned`,
        note: '',
      };
  }
  const naive = await runChild(['exec', FLOOD, String(CASE_CAP_S)]);
  if (naive.error) skipped.push(['exec maxBuffer ∞', naive.error]);
  else
    results['naive exec, maxBuffer ∞ (reference)'] = {
      rssBefore: naive.before.rss,
      peak: naive.hwm,
      peakFromHwm: true,
      seconds: naive.ms / 1000,
      survived: 'yes',
      outcome: `${naive.result.status}, ${naive.result.outputChars} chars kept`,
      note: '',
    };
}

let failure;
try {
  await main();
} catch (error) {
  failure = error;
}
const leaks = leakCheck(conchPids);
work.remove();

const conch = results['conch-mcp'] ?? results['conch engine (no MCP)'];
for (const [name, r] of Object.entries(results)) {
  rows.push([
    name,
    (r.rssBefore / MB).toFixed(0),
    `${r.peakFromHwm ? '' : '≥ '}${(r.peak / MB).toFixed(0)}`,
    ((r.peak - r.rssBefore) / MB).toFixed(0),
    conch && r !== conch ? ratio(conch.peak, r.peak) : '-',
    r.seconds.toFixed(1),
    r.survived,
    `${r.outcome}${r.note ? ` (${r.note})` : ''}`,
  ]);
}
console.log(
  `\nPeak RSS while \`${FLOOD}\` runs to completion, MB (VmHWM of the server process); ratio = conch / this, of peaks\n`,
);
console.log(
  table(['process', 'RSS before', 'peak RSS', 'growth', 'conch/this', 's', 'survived', 'outcome'], rows),
);
for (const [name, why] of skipped) console.log(`SKIPPED ${name}: ${why}`);
if (leaks.ours.length > 0) {
  console.log(
    `LEAK: ${leaks.ours.length} process(es) with CONCH_SESSION_ID survived and were killed: ${leaks.ours.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`,
  );
} else {
  console.log('No leftover processes with CONCH_SESSION_ID from this run.');
}
saveSection('memory', {
  command: FLOOD,
  results,
  skipped: Object.fromEntries(skipped),
  leaks: leaks.ours.length,
});
if (failure) {
  console.error(`memory failed: ${failure instanceof Error ? failure.stack : String(failure)}`);
  process.exitCode = 1;
}
if (leaks.ours.length > 0) process.exitCode = 1;
setTimeout(() => process.exit(), 200).unref();
