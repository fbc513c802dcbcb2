// Shared helpers of the @conch/bench scripts: statistics, tables, the JSON summary, time caps, and
// /proc readers for peak RSS, process trees and leak checks (Linux only).

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = join(BENCH_DIR, '..');
export const RESULTS_DIR = join(BENCH_DIR, 'results');
export const RESULTS_FILE = join(RESULTS_DIR, 'latest.json');
export const CONCH_MCP_BIN = join(REPO_DIR, 'apps', 'mcp-server', 'dist', 'bin.cjs');
/**
 * Marker of one benchmark run, put into the environment of everything the run starts (run-all.mjs
 * sets it; a script run alone uses its own pid), so that leftovers can be found at the end.
 */
export const BENCH_RUN = process.env.CONCH_BENCH_RUN ?? `solo-${process.pid}`;
process.env.CONCH_BENCH_RUN = BENCH_RUN;

// ------------------------------------------------------------------------------------------------
// Statistics and tables

/** Summary of samples in milliseconds. */
export function stats(samples) {
  const xs = [...samples].sort((a, b) => a - b);
  const n = xs.length;
  if (n === 0)
    return {
      n: 0,
      median: Number.NaN,
      p90: Number.NaN,
      p95: Number.NaN,
      p99: Number.NaN,
      min: Number.NaN,
      mean: Number.NaN,
    };
  const q = (p) => xs[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))];
  const median = n % 2 === 1 ? xs[(n - 1) / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
  return {
    n,
    median,
    p90: q(0.9),
    p95: q(0.95),
    p99: q(0.99),
    min: xs[0],
    mean: xs.reduce((a, b) => a + b, 0) / n,
  };
}

/** `a / b` as `1.23×`, or `-` when either is missing. */
export function ratio(a, b) {
  if (!(a > 0) || !(b > 0)) return '-';
  const r = a / b;
  return `${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

/** Milliseconds with sensible precision. */
export function ms(x) {
  if (x === undefined || Number.isNaN(x)) return '-';
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
}

/**
 * A plain-text table. `align` has one letter per column, `l` (left) or `r` (right); by default the first
 * column is left-aligned and the rest right-aligned.
 */
export function table(headers, rows, align = `l${'r'.repeat(headers.length - 1)}`) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (cells) =>
    cells
      .map((c, i) =>
        align[i] === 'l' ? String(c ?? '').padEnd(widths[i]) : String(c ?? '').padStart(widths[i]),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

// ------------------------------------------------------------------------------------------------
// Results

/** Merges `data` as `results[section]` into bench/results/latest.json (gitignored). */
export function saveSection(section, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  let all = {};
  try {
    all = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'));
  } catch {
    all = {};
  }
  all[section] = { date: new Date().toISOString(), node: process.version, ...data };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(all, null, 2)}\n`);
}

// ------------------------------------------------------------------------------------------------
// Time caps

/** Resolves like `promise`, or rejects with `label timed out` after `ms`. */
export function withCap(promise, ms, label) {
  let timer;
  const cap = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} timed out after ${(ms / 1000).toFixed(0)} s`)), ms);
  });
  return Promise.race([promise, cap]).finally(() => clearTimeout(timer));
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` (async, one sample per call, returns nothing) `warmup` times, then until `maxSamples`
 * samples or `maxMs` of measuring (at least `minSamples`). Returns the samples in ms.
 */
export async function sample(fn, { warmup = 5, maxSamples = 200, minSamples = 5, maxMs = 10_000 } = {}) {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = [];
  const start = performance.now();
  while (samples.length < maxSamples && (samples.length < minSamples || performance.now() - start < maxMs)) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return samples;
}

/**
 * Like {@link sample} for several candidates at once, interleaved: each round runs every candidate once,
 * in a rotating order, so that load from other processes on the machine hits them alike. A candidate
 * that resolves to a number reports its own duration (timed where it ran); otherwise the call is timed.
 * Returns `{ name: samples }`.
 */
export async function sampleInterleaved(
  candidates,
  { warmup = 5, maxRounds = 200, minRounds = 5, maxMs = 10_000 } = {},
) {
  const names = Object.keys(candidates);
  for (let i = 0; i < warmup; i++) for (const name of names) await candidates[name]();
  const out = Object.fromEntries(names.map((n) => [n, []]));
  const start = performance.now();
  for (
    let round = 0;
    round < maxRounds && (round < minRounds || performance.now() - start < maxMs);
    round++
  ) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      const t0 = performance.now();
      const own = await candidates[name]();
      out[name].push(typeof own === 'number' ? own : performance.now() - t0);
    }
  }
  return out;
}

/**
 * Back-to-back ("warm") samples of several candidates: in each of `blocks` rounds every candidate, in a
 * rotating order, makes `block` + 1 calls one right after another, and the first of them (which follows
 * the other candidates' work, so is cold) is dropped. Each candidate is `async (n) => samples`: it makes n
 * calls back to back and returns their times in ms (so that a candidate timed in another process makes
 * its calls there without a message in between). Returns `{ name: samples }`.
 */
export async function sampleBackToBack(candidates, { blocks = 10, block = 20 } = {}) {
  const names = Object.keys(candidates);
  const out = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < blocks; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      const samples = await candidates[name](block + 1);
      out[name].push(...samples.slice(1));
    }
  }
  return out;
}

/** A private temporary directory, removed by the returned function. */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// ------------------------------------------------------------------------------------------------
// conch's engine

/**
 * conch's engine in this process, as the engine benchmarks run it: a SessionManager over the local PTY
 * driver, on the real clock, with the xterm screen, and spill files and the driver's temporary files in a
 * private temporary directory (`cwd`, also the sessions' default cwd). `defaults` and `limits` are passed
 * on to the manager. The @conch packages are loaded here, on the first call, so that scripts that only
 * use the statistics and /proc helpers above do not load them.
 *
 * `run(sessionId, command)` executes a command and throws unless it completed with exit code 0;
 * `close(capMs)` shuts the engine down (at most `capMs`), disposes the driver and the spill store;
 * `remove()` deletes the temporary directory. {@link runEngineBench} does both at the end.
 */
export async function benchEngine({ prefix, defaults = {}, limits } = {}) {
  const [{ createRealClock, SessionManager }, { createXtermScreen, FileSpillStore }, { createLocalDriver }] =
    await Promise.all([import('@conch/core'), import('@conch/node'), import('@conch/pty')]);
  const work = tempDir(prefix);
  const cwd = work.dir;
  const spill = new FileSpillStore({ dir: `${cwd}/spill` });
  const driver = createLocalDriver({ tmpDir: cwd });
  const manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    spill,
    screen: createXtermScreen,
    defaults: { cwd, ...defaults },
    ...(limits ? { limits } : {}),
  });
  async function run(sessionId, command) {
    const r = await manager.execute({ command, session_id: sessionId });
    if (r.status !== 'completed' || r.exit_code !== 0) {
      const { output, ...rest } = r;
      throw new Error(
        `conch: ${command} → ${JSON.stringify(rest)}; output ${JSON.stringify(output.slice(0, 300))}; sessions ${JSON.stringify(manager.listSessions())}`,
      );
    }
    return r;
  }
  async function close(capMs = 15_000) {
    await withCap(manager.shutdown(), capMs, 'conch shutdown').catch((e) => console.error(String(e)));
    await driver.dispose().catch(() => undefined);
    spill.dispose();
  }
  return { cwd, manager, driver, run, close, remove: work.remove };
}

/**
 * Runs an engine benchmark script's `main` (at most `capMs`) and ends the script: closes `engine` (see
 * {@link benchEngine}; its shutdown capped at `shutdownCapMs`), then `stop()` (what else the script
 * started), kills and reports the processes with CONCH_SESSION_ID that one of `ownerPids` (default this
 * process) left, removes the engine's directory, saves what `main` returned with the leak count under
 * `section` of the results file, and sets the exit code to 1 on a failure or a leak. The process exits
 * soon after (node-pty handles may keep the loop alive; everything started has been killed).
 */
export async function runEngineBench(
  engine,
  { name, section, main, capMs, shutdownCapMs = 15_000, stop, ownerPids = [process.pid] },
) {
  let results;
  let failure;
  try {
    results = await withCap(main(), capMs, name);
  } catch (error) {
    failure = error;
  }
  await engine.close(shutdownCapMs);
  await stop?.();
  const leaks = leakCheck(ownerPids);
  engine.remove();
  if (leaks.ours.length > 0) {
    console.log(
      `\nLEAK: ${leaks.ours.length} process(es) with CONCH_SESSION_ID survived and were killed: ${leaks.ours.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`,
    );
  } else {
    console.log(
      `\nNo leftover processes with CONCH_SESSION_ID from this run${leaks.others > 0 ? ` (${leaks.others} belong to other conch servers on this machine)` : ''}.`,
    );
  }
  if (results) saveSection(section, { ...results, leaks: leaks.ours.length });
  if (failure) {
    console.error(`${name} failed: ${failure instanceof Error ? failure.stack : String(failure)}`);
    process.exitCode = 1;
  } else if (leaks.ours.length > 0) {
    process.exitCode = 1;
  }
  setTimeout(() => process.exit(), 200).unref();
}

// ------------------------------------------------------------------------------------------------
// /proc

/** A field of /proc/<pid>/status in bytes (VmHWM, VmRSS, …), or undefined. */
export function procStatusBytes(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function listPids() {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

function readPpid(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], ppid: Number(rest[1]) };
  } catch {
    return undefined;
  }
}

/** True if the process exists and is not a zombie. */
export function isAlive(pid) {
  const s = readPpid(pid);
  return s !== undefined && s.state !== 'Z' && s.state !== 'X';
}

/** Every live descendant of `pid` (not `pid` itself). */
export function descendants(pid) {
  const children = new Map();
  for (const p of listPids()) {
    const s = readPpid(p);
    if (!s || s.state === 'Z') continue;
    if (!children.has(s.ppid)) children.set(s.ppid, []);
    children.get(s.ppid).push(p);
  }
  const out = [];
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length > 0) {
    const p = stack.pop();
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

function readEnv(pid) {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return [];
  }
}

function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '?';
  }
}

/** Live processes whose environment has CONCH_SESSION_ID, with their CONCH_OWNER tag. */
export function conchProcesses() {
  const found = [];
  for (const pid of listPids()) {
    if (!isAlive(pid)) continue;
    const env = readEnv(pid);
    const session = env.find((e) => e.startsWith('CONCH_SESSION_ID='));
    if (!session) continue;
    const owner = env.find((e) => e.startsWith('CONCH_OWNER='))?.slice('CONCH_OWNER='.length) ?? '';
    found.push({
      pid,
      owner,
      session: session.slice('CONCH_SESSION_ID='.length),
      cmd: cmdline(pid).slice(0, 80),
    });
  }
  return found;
}

/**
 * Checks that no process carrying CONCH_SESSION_ID belongs to one of `ownerPids` (conch's owner tag is
 * `conch-<server pid>-…`). Kills and returns any such leftovers. Processes of other conch servers
 * (other people's tests on this machine) are counted but left alone.
 */
export function leakCheck(ownerPids) {
  const owners = new Set(ownerPids.map(Number));
  const all = conchProcesses();
  const ours = all.filter((p) => {
    const m = /^conch-(\d+)-/.exec(p.owner);
    return m !== null && owners.has(Number(m[1]));
  });
  for (const p of ours) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return { ours, others: all.length - ours.length };
}

/** Live processes (other than this one) whose environment carries CONCH_BENCH_RUN=`run`. */
export function processesOfRun(run = BENCH_RUN) {
  const want = `CONCH_BENCH_RUN=${run}`;
  return listPids()
    .filter((pid) => pid !== process.pid && isAlive(pid) && readEnv(pid).includes(want))
    .map((pid) => ({
      pid,
      cmd: cmdline(pid).slice(0, 80),
      conch: readEnv(pid).some((e) => e.startsWith('CONCH_SESSION_ID=')),
    }));
}

/** SIGKILLs `pid` and every descendant still alive; returns how many were alive. */
export function killTree(pid) {
  const targets = [...descendants(pid), pid].filter(isAlive);
  for (const p of targets) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return targets.length;
}

/** Whether the built conch MCP server exists (another engineer may still be building it). */
export function conchMcpAvailable() {
  return existsSync(CONCH_MCP_BIN);
}
