#!/usr/bin/env node
// The test command: installs and builds when needed, runs every vitest project once, then runs the tests of
// the process facts a second time with the portable facts (CONCH_PROCESS_FACTS=ps: `ps` and `lsof` instead of
// Linux's /proc), and ends with the plain line `N passed, N failed` (plus skipped) counting the whole run —
// both passes — after the reliability summary line. Extra arguments go to vitest (and skip the second pass).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrap } from './bootstrap.mjs';
import { RELIABILITY_DIR, reliabilityLine, reliabilityTotals } from './reliability-summary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await bootstrap();
/**
 * What runs a second time with the portable process facts: the driver conformance suite (local and over
 * SSH), every test of the PTY driver, and the MCP server's process, prompt, instance and leak tests.
 */
const PORTABLE_FACTS_TESTS = [
  'packages/pty',
  'packages/ssh/test/conformance.test.ts',
  'apps/mcp-server/test/processes.test.ts',
  'apps/mcp-server/test/interactive.test.ts',
  'apps/mcp-server/test/instances.test.ts',
  'apps/mcp-server/test/reliability-leaks.test.ts',
];

/** The first line of a failure message, without colours, at most 300 characters. */
function firstLine(text) {
  const line =
    String(text ?? '')
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * What a failed test's report says, in one line. vitest 4 reports a test or hook that ran out of time
 * with the stack of its placeholder error, whose first line is `Error: STACK_TRACE_ERROR`: that is named.
 */
function failureLine(test) {
  const line = firstLine(test.failureMessages?.[0]);
  if (!line.includes('STACK_TRACE_ERROR')) return line;
  const ms = Math.round(test.duration ?? 0);
  return `timed out (a test or hook ran past its timeout; the test took ${ms} ms)`;
}

/** Runs vitest with `args` (and `env` added); returns its exit status and its counts. */
function vitest(name, args, env = {}) {
  const report = join(root, `.vitest-report${name}.json`);
  rmSync(report, { force: true });
  const r = spawnSync(
    'npx',
    [
      '-y',
      'pnpm@10.34.9',
      'exec',
      'vitest',
      'run',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      ...args,
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } },
  );
  const counts = { status: r.status, passed: 0, failed: 0, skipped: 0, failures: [] };
  if (!existsSync(report)) {
    counts.failed = 1;
    counts.failures.push(`${name || 'first pass'}: vitest wrote no report (exit ${r.status})`);
    return counts;
  }
  const json = JSON.parse(readFileSync(report, 'utf8'));
  counts.passed = json.numPassedTests ?? 0;
  counts.failed = json.numFailedTests ?? 0;
  counts.skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  // A file that fails to load has no tests to count: count it as a failure.
  for (const file of json.testResults ?? []) {
    const where = relative(root, file.name ?? '');
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) {
      counts.failed++;
      counts.failures.push(`${where}: ${firstLine(file.message) || 'the file failed to load'}`);
    }
    for (const test of file.assertionResults ?? [])
      if (test.status === 'failed')
        counts.failures.push(`${where} > ${test.fullName ?? test.title}: ${failureLine(test)}`);
  }
  return counts;
}

// The reliability tests write their counts here; the line after the run sums them.
rmSync(RELIABILITY_DIR, { recursive: true, force: true });
const extra = process.argv.slice(2);
const runs = [vitest('', extra)];
if (extra.length === 0) {
  process.stdout.write(
    '\n::: the process-facts tests again with CONCH_PROCESS_FACTS=ps (ps and lsof, no /proc)\n',
  );
  runs.push(vitest('-ps', PORTABLE_FACTS_TESTS, { CONCH_PROCESS_FACTS: 'ps' }));
}
let passed = 0;
let failed = 0;
let skipped = 0;
for (const run of runs) {
  passed += run.passed;
  failed += run.failed;
  skipped += run.skipped;
}
let reliability;
try {
  reliability = reliabilityLine(reliabilityTotals());
} catch (error) {
  reliability = `reliability: unreadable report (${error.message})`;
  failed++;
}
process.stdout.write(`\n${reliability}\n`);
// The failed tests by name, next to the count (a long log's tail is often all that is read).
const failures = runs.flatMap((run, i) => run.failures.map((f) => (i === 0 ? f : `[ps] ${f}`)));
if (failures.length > 0) process.stdout.write(`\nfailed:\n${failures.map((f) => `  ${f}\n`).join('')}`);
const status = runs.every((run) => run.status === 0) && failed === 0 ? 0 : 1;
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(status);
