// Benchmark of @conch/core's output path, side by side with the naive alternative, in one run.
// Runs against the built `dist/` (`pnpm bench` builds first). Usage: `node bench/run.mjs`
// (`--quick` for 20 MB floods instead of 100/200 MB, e.g. while developing this file).
//
// What it measures, each case in a fresh child process (clean heap, its own peak RSS):
//   1. Throughput (MB/s) of 100 MB of terminal output fed in 16 KiB chunks, for four workloads:
//      `yes` lines ("y\r\n", the worst case per byte), ordinary log lines, long lines without newlines,
//      and ANSI-heavy colourful output (SGR colours, truecolor, OSC 8 links, \r progress bars, UTF-8).
//      Candidates: OutputLog (renderer + line ring + raw ring + error index; no spill), TextRenderer
//      alone, and the naive approach other tools use: decode each chunk, append it to one big string,
//      and strip ANSI with a regex (the ansi-regex pattern) when the text is read. Every candidate ends
//      with one read of 30,000 characters, so the naive one pays for one strip (its cheapest case).
//      Heap growth: peak `used_heap_size` during the flood minus before; "retained" after a forced GC
//      with the log still alive; peak RSS is the child's VmHWM minus its RSS before the flood.
//   2. `readSince` cost after a 200 MB flood of colourful log lines, for maxChars 1k..200k, from the
//      start (head from the spill, tail from the ring, rescued error lines from the middle) and after
//      20 MB vs 200 MB (it should depend on maxChars, not on the size of the log), versus the naive
//      read: strip the whole joined string and take its last maxChars characters.
// Nothing here asserts a time: the numbers are printed as tables with ratios and written to
// bench/.bench-results/latest.json (gitignored).

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = join(HERE, '..', 'dist');
const MB = 1e6;
const CHUNK = 16 * 1024;
const CHILD_CAP_MS = 120_000;

// The pattern of ansi-regex 5/6 (what strip-ansi uses).
const ANSI_RE =
  /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]))/g;

// ------------------------------------------------------------------------------------------------
// Workloads: a source buffer made of whole units, streamed cyclically in CHUNK-sized pieces (so chunk
// boundaries fall at different places inside lines and escape sequences on every pass).

const enc = new TextEncoder();
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma'];

function buildSource(workload) {
  const parts = [];
  let size = 0;
  const push = (s) => {
    parts.push(s);
    size += s.length;
  };
  let i = 0;
  switch (workload) {
    case 'yes':
      return enc.encode('y\r\n'.repeat(350_000));
    case 'log':
      while (size < 2_000_000) {
        const w = WORDS[i % WORDS.length];
        if (i % 997 === 0)
          push(
            `2025-01-02T03:04:05.${String(i % 1000).padStart(3, '0')}Z ERROR [worker-${i % 8}] request ${i} failed: connection reset by peer\r\n`,
          );
        else
          push(
            `2025-01-02T03:04:05.${String(i % 1000).padStart(3, '0')}Z INFO  [worker-${i % 8}] processed ${w} item ${i} in ${i % 97} ms\r\n`,
          );
        i++;
      }
      break;
    case 'long': {
      const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/';
      return enc.encode(alphabet.repeat(32_768)); // 2 MiB, no line break at all
    }
    case 'ansi':
      while (size < 2_000_000) {
        const w = WORDS[i % WORDS.length];
        const k = i % 10;
        if (k < 5) {
          push(
            ` \x1b[32m✓\x1b[39m \x1b[2msrc/${w}.test.ts\x1b[22m > \x1b[1m${w} works\x1b[22m \x1b[33m(${i % 50} ms)\x1b[39m\r\n`,
          );
        } else if (k < 7) {
          push(
            `\x1b[38;5;${i % 256}m${w}\x1b[0m \x1b[38;2;${i % 256};${(i * 7) % 256};${(i * 13) % 256}m${w}-${i}\x1b[0m \x1b]8;;https://example.invalid/${w}\x07link\x1b]8;;\x07 \x1b[48;5;236m ok \x1b[0m\r\n`,
          );
        } else if (k < 9) {
          const pct = (i * 3) % 101;
          push(`\r\x1b[K\x1b[36m${'█'.repeat(pct >> 3)}${'░'.repeat(12 - (pct >> 3))}\x1b[0m ${pct}% ${w}`);
          if (k === 8) push('\r\n');
        } else {
          push(
            ` \x1b[31m✗\x1b[39m \x1b[1;31mFAIL\x1b[0m src/${w}.test.ts > ${w} fails: expected ${i} to be ${i + 1}\r\n`,
          );
        }
        i++;
      }
      break;
    default:
      throw new Error(`unknown workload ${workload}`);
  }
  return enc.encode(parts.join(''));
}

/** Calls `fn(chunk)` for `total` bytes of `source`, cycled, in CHUNK pieces. */
function stream(source, total, fn) {
  let sent = 0;
  let pos = 0;
  while (sent < total) {
    const end = Math.min(source.length, pos + CHUNK, pos + (total - sent));
    const chunk = source.subarray(pos, end);
    fn(chunk);
    sent += chunk.length;
    pos = end >= source.length ? 0 : end;
  }
  return sent;
}

// ------------------------------------------------------------------------------------------------
// Candidates

class NaiveLog {
  constructor() {
    this.decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
    this.all = '';
  }
  append(chunk) {
    this.all += this.decoder.decode(chunk, { stream: true });
  }
  read(maxChars) {
    const text = this.all.replace(ANSI_RE, '');
    return text.length > maxChars ? text.slice(text.length - maxChars) : text;
  }
}

async function loadCore() {
  const core = await import(join(DIST, 'index.js'));
  const { MemorySpill } = await import(join(DIST, 'output', 'memory-spill.js'));
  return { ...core, MemorySpill };
}

function exposeGc() {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

function vmHwmKb() {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : 0;
}

function heapUsed() {
  return v8.getHeapStatistics().used_heap_size;
}

// ------------------------------------------------------------------------------------------------
// Child: one throughput case

async function childThroughput(workload, impl, totalBytes) {
  const gc = exposeGc();
  const { OutputLog, TextRenderer } = await loadCore();
  const source = buildSource(workload);
  // Warm up the code paths on a separate instance (2 MB), then measure on a fresh one.
  const make = () => {
    if (impl === 'OutputLog') {
      const log = new OutputLog();
      return {
        append: (c) => log.append(c),
        read: (n) => log.readSince(log.cursorAtStart(), { maxChars: n }).text,
        keep: log,
      };
    }
    if (impl === 'TextRenderer') {
      let lines = 0;
      const r = new TextRenderer({ onLine: () => void lines++ });
      return { append: (c) => r.write(c), read: () => `${lines}`, keep: r };
    }
    const n = new NaiveLog();
    return { append: (c) => n.append(c), read: (m) => n.read(m), keep: n };
  };
  {
    const w = make();
    stream(source, 2 * MB, w.append);
    w.read(30_000);
  }
  gc();
  gc();
  const rssBefore = process.memoryUsage.rss();
  const heapBefore = heapUsed();
  let heapPeak = heapBefore;
  const c = make();
  let k = 0;
  const t0 = performance.now();
  const sent = stream(source, totalBytes, (chunk) => {
    c.append(chunk);
    if ((++k & 127) === 0) heapPeak = Math.max(heapPeak, heapUsed());
  });
  const text = c.read(30_000);
  const ms = performance.now() - t0;
  heapPeak = Math.max(heapPeak, heapUsed());
  gc();
  const retained = heapUsed() - heapBefore;
  const hwm = vmHwmKb() * 1024;
  // Keep the candidate alive until after the retained measurement.
  if (c.keep === undefined || text === undefined) throw new Error('unreachable');
  return {
    workload,
    impl,
    bytes: sent,
    ms,
    mbPerS: sent / MB / (ms / 1000),
    heapPeakGrowth: heapPeak - heapBefore,
    heapRetained: retained,
    rssPeakGrowth: Math.max(0, hwm - rssBefore),
  };
}

// ------------------------------------------------------------------------------------------------
// Child: readSince after a flood

const READ_SIZES = [1_000, 10_000, 30_000, 100_000, 200_000];

function timeIt(fn, reps, warm = 10) {
  for (let i = 0; i < warm; i++) fn();
  const xs = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    xs.push(performance.now() - t0);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
}

async function childReadSince(totalBytes) {
  const { OutputLog, MemorySpill } = await loadCore();
  const source = buildSource('ansi');
  // The production spill is a file (FileSpillSink, 256 MiB cap); here an in-memory one capped at 32 MB.
  const spill = new MemorySpill({ maxChars: 32 * MB, path: '/nonexistent/spill.log' });
  const log = new OutputLog({ spill });
  const early = Math.min(20 * MB, totalBytes / 10);
  stream(source, early, (c) => log.append(c));
  const at = (label) => {
    const rows = [];
    for (const maxChars of READ_SIZES) {
      let out;
      const ms = timeIt(() => {
        out = log.readSince(log.cursorAtStart(), { maxChars });
      }, 15);
      rows.push({
        at: label,
        maxChars,
        ms,
        returnedChars: out.text.length,
        truncated: out.truncated,
        omittedLines: out.omittedLines,
        errorLinesKept: out.errorLinesKept,
      });
    }
    return { rows };
  };
  const first = at(`${Math.round(early / MB)} MB`);
  stream(source, totalBytes - early, (c) => log.append(c));
  const second = at(`${Math.round(totalBytes / MB)} MB`);
  return {
    bytes: log.bytesTotal,
    lines: log.linesTotal,
    droppedLines: log.droppedLines,
    spillLines: spill.storedLines,
    rows: [...first.rows, ...second.rows],
  };
}

async function childNaiveRead(totalBytes) {
  const source = buildSource('ansi');
  const naive = new NaiveLog();
  stream(source, totalBytes, (c) => naive.append(c));
  // Stripping the whole string dominates and does not depend on maxChars: three reads, one per size.
  const rows = [];
  for (const maxChars of [1_000, 30_000, 200_000]) {
    const t0 = performance.now();
    naive.read(maxChars);
    rows.push({ maxChars, ms: performance.now() - t0 });
  }
  const sorted = rows.map((r) => r.ms).sort((a, b) => a - b);
  return { bytes: totalBytes, chars: naive.all.length, rows, medianMs: sorted[1] };
}

// ------------------------------------------------------------------------------------------------
// Parent

function runChild(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_CAP_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error('failed');
        resolve(JSON.parse(line));
      } catch {
        const why =
          signal === 'SIGKILL' ? `killed after the ${CHILD_CAP_MS / 1000} s cap` : `exit ${code ?? signal}`;
        resolve({ error: `${why}: ${err.trim().split('\n').slice(-3).join(' | ')}` });
      }
    });
  });
}

const f1 = (x) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1));
const mb = (bytes) => (bytes / MB).toFixed(1);
const ratio = (a, b) => (a > 0 && b > 0 ? `${(a / b).toFixed(2)}×` : '-');

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function parent() {
  const quick = process.argv.includes('--quick');
  const floodBytes = quick ? 20 * MB : 100 * MB;
  const readBytes = quick ? 20 * MB : 200 * MB;
  const started = Date.now();
  console.log(
    `@conch/core output benchmark (node ${process.version}, ${floodBytes / MB} MB per throughput case, chunks of ${CHUNK / 1024} KiB)`,
  );

  const WORKLOADS = [
    ['yes', '`yes` lines (y\\r\\n)'],
    ['log', 'log lines (~75 chars)'],
    ['long', 'long lines, no newline'],
    ['ansi', 'ANSI-heavy colourful'],
  ];
  const IMPLS = ['OutputLog', 'TextRenderer', 'naive'];
  const results = [];
  for (const [w] of WORKLOADS) {
    for (const impl of IMPLS) results.push(await runChild(['throughput', w, impl, String(floodBytes)]));
  }
  const get = (w, impl) => results.find((r) => r.workload === w && r.impl === impl);
  const rows = [];
  const errors = [];
  for (const [w, label] of WORKLOADS) {
    const log = get(w, 'OutputLog');
    const ren = get(w, 'TextRenderer');
    const nai = get(w, 'naive');
    rows.push([
      label,
      f1(log?.mbPerS),
      f1(ren?.mbPerS),
      f1(nai?.mbPerS),
      log && nai ? ratio(log.mbPerS, nai.mbPerS) : '-',
      log ? mb(log.heapPeakGrowth) : '-',
      nai ? mb(nai.heapPeakGrowth) : '-',
      log && nai ? ratio(log.heapPeakGrowth, nai.heapPeakGrowth) : '-',
      log ? mb(log.heapRetained) : '-',
      nai ? mb(nai.heapRetained) : '-',
      log ? mb(log.rssPeakGrowth) : '-',
      nai ? mb(nai.rssPeakGrowth) : '-',
    ]);
  }
  for (const r of results) if (r.error) errors.push(r.error);
  console.log(
    '\nThroughput (MB/s) and memory (MB) for a flood; ratio = OutputLog / naive (throughput: higher is better; heap: lower is better)\n',
  );
  console.log(
    table(
      [
        'workload',
        'OutputLog MB/s',
        'TextRenderer MB/s',
        'naive MB/s',
        'speed ratio',
        'log heap peak',
        'naive heap peak',
        'heap ratio',
        'log retained',
        'naive retained',
        'log RSS peak',
        'naive RSS peak',
      ],
      rows,
    ),
  );

  const rs = await runChild(['readsince', String(readBytes)]);
  const nr = await runChild(['naiveread', String(readBytes)]);
  if (rs.error) errors.push(`readSince: ${rs.error}`);
  if (nr.error) errors.push(`naive read: ${nr.error}`);
  if (!rs.error) {
    console.log(
      `\nreadSince(cursorAtStart) after a flood of colourful log lines (${mb(rs.bytes)} MB, ${rs.lines} lines; spill keeps the first ${rs.spillLines}, ${rs.droppedLines} dropped); median of 15, ms\n`,
    );
    const big = rs.rows.filter((r) => r.at === `${Math.round(readBytes / MB)} MB`);
    const small = rs.rows.filter((r) => r.at !== `${Math.round(readBytes / MB)} MB`);
    const rrows = big.map((r) => {
      const s = small.find((x) => x.maxChars === r.maxChars);
      const n = nr.error ? undefined : { ms: nr.medianMs };
      return [
        r.maxChars,
        r.returnedChars,
        r.errorLinesKept,
        s ? s.ms.toFixed(3) : '-',
        r.ms.toFixed(3),
        ((r.ms * 1000) / (r.maxChars / 1000)).toFixed(1),
        n ? n.ms.toFixed(0) : '-',
        n ? `${(n.ms / r.ms).toFixed(0)}×` : '-',
      ];
    });
    console.log(
      table(
        [
          'maxChars',
          'chars out',
          'errors kept',
          `ms @ ${small[0]?.at ?? '?'}`,
          `ms @ ${big[0]?.at ?? '?'}`,
          'µs per 1k chars',
          'naive ms (strip all, median of 3)',
          'naive / readSince',
        ],
        rrows,
      ),
    );
  }
  if (errors.length > 0) {
    console.log('\nProblems:');
    for (const e of errors) console.log(`  - ${e}`);
  }
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    floodBytes,
    chunkBytes: CHUNK,
    throughput: results,
    readSince: rs,
    naiveRead: nr,
    seconds: (Date.now() - started) / 1000,
  };
  const outDir = join(HERE, '.bench-results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(
    `\n(${summary.seconds.toFixed(1)} s; JSON in ${join('bench', '.bench-results', 'latest.json')})`,
  );
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  const [, kind, a, b, c] = argv;
  let result;
  if (kind === 'throughput') result = await childThroughput(a, b, Number(c));
  else if (kind === 'readsince') result = await childReadSince(Number(a));
  else if (kind === 'naiveread') result = await childNaiveRead(Number(a));
  else throw new Error(`unknown child ${kind}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  await parent();
}
