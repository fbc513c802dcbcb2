// Benchmark of @conch/policy (run `pnpm --filter @conch/policy build` first; `pnpm bench` does).
// Measures, for typical commands, the time of one evaluation (median and p99, µs) after warm-up, and the
// start-up cost in a fresh process (import of the package + the parser, compiling a policy, the first
// evaluation). A naive string-splitting checker is timed too, only as a reference for speed: it is the kind
// of checker that earlier agent tools used and that was bypassed.
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parse } from 'unbash';
import { Policy } from '../dist/index.js';

const COMMANDS = [
  'git status',
  'ls -la',
  'npm test -- --watch=false',
  'ls -la | grep foo | wc -l',
  'cd src && git diff --stat HEAD~1 -- . ":(exclude)*.lock"',
  'for f in *.ts; do echo "$f"; wc -l "$f"; done',
  'find . -name "*.log" -mtime +7 -print | xargs -r ls -la',
  'sudo -u www-data env FOO=1 timeout 5 nice -n 5 ./deploy.sh --dry-run',
  'cat <<EOF > notes.txt\nline one $(date)\nline two\nEOF',
  "bash -c 'for i in 1 2 3; do echo $i; done' && echo done",
];

const policies = {
  'deny rm': new Policy({ deny: ['rm', 'git push --force'] }),
  'allow list': new Policy({
    allow: [
      'git',
      'ls',
      'npm test',
      'grep',
      'wc',
      'cd',
      'echo',
      'find',
      'xargs',
      'cat',
      'bash',
      'sudo',
      './deploy.sh',
    ],
  }),
};

function naive(command, denied) {
  return command
    .split(/[;&|\n]+/)
    .map((s) => s.trim().split(/\s+/)[0])
    .some((w) => denied.includes(w));
}

function stats(fn, iterations = 3000) {
  for (let i = 0; i < 300; i++) fn();
  const samples = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    fn();
    samples[i] = (performance.now() - t0) * 1000;
  }
  samples.sort();
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { median: at(0.5), p99: at(0.99) };
}

const fmt = (n) => n.toFixed(1).padStart(8);
// Warm every code path up before timing anything (JIT tiers, inline caches).
for (let i = 0; i < 2000; i++) {
  for (const command of COMMANDS) for (const p of Object.values(policies)) p.evaluate(command);
}
const rows = [];
for (const command of COMMANDS) {
  const label = JSON.stringify(command).slice(0, 46).padEnd(46);
  const d = stats(() => policies['deny rm'].evaluate(command));
  const a = stats(() => policies['allow list'].evaluate(command));
  const p = stats(() => parse(command));
  const n = stats(() => naive(command, ['rm']));
  rows.push([label, d, a, p, n]);
}

console.log('\n@conch/policy: evaluation time per command (µs, after warm-up; median / p99)\n');
console.log(
  `${'command'.padEnd(46)}  deny-list med     p99  allow-list med     p99  unbash parse med  naive split med`,
);
for (const [label, d, a, p, n] of rows) {
  console.log(
    `${label}  ${fmt(d.median)}${fmt(d.p99)}  ${fmt(a.median)}${fmt(a.p99)}  ${fmt(p.median).padStart(16)}  ${fmt(n.median).padStart(15)}`,
  );
}

// Start-up: a fresh process imports the package (and the parser), compiles a policy and evaluates once.
const probe = `
const t0 = performance.now();
const { Policy } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
const t1 = performance.now();
const policy = new Policy({ allow: ['git', 'ls'], deny: ['rm'] });
const t2 = performance.now();
policy.evaluate('git status && ls -la | grep foo');
const t3 = performance.now();
policy.evaluate('git log --oneline -5');
const t4 = performance.now();
console.log(JSON.stringify({ importMs: t1 - t0, compileMs: t2 - t1, firstMs: t3 - t2, secondMs: t4 - t3 }));
`;
const runs = [];
for (let i = 0; i < 7; i++) {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    encoding: 'utf8',
  });
  runs.push(JSON.parse(out));
}
const med = (k) => runs.map((r) => r[k]).sort((x, y) => x - y)[Math.floor(runs.length / 2)];
console.log('\nStart-up in a fresh process (median of 7, ms)\n');
console.log(`import @conch/policy (incl. unbash, zod)  ${med('importMs').toFixed(2).padStart(8)}`);
console.log(`compile a 3-rule policy                   ${med('compileMs').toFixed(2).padStart(8)}`);
console.log(`first evaluation (cold parser, JIT)       ${med('firstMs').toFixed(2).padStart(8)}`);
console.log(`second evaluation (still cold)            ${med('secondMs').toFixed(2).padStart(8)}`);
console.log(
  `time to first decision                    ${(med('importMs') + med('compileMs') + med('firstMs')).toFixed(2).padStart(8)}`,
);

// Where the import time goes: each dependency alone in a fresh process (zod is shared with the MCP server
// and the CLI, which load it anyway; unbash is the parser's own cost).
console.log('\nImport of each dependency alone in a fresh process (median of 5, ms)\n');
for (const mod of ['unbash', 'zod', '@conch/core']) {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const t = performance.now(); await import(${JSON.stringify(mod)}); console.log(performance.now() - t);`,
      ],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' },
    );
    times.push(Number(out));
  }
  times.sort((x, y) => x - y);
  console.log(`${mod.padEnd(42)}${times[2].toFixed(2).padStart(8)}`);
}
console.log('');
