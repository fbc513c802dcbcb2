#!/usr/bin/env node
// The test command: installs and builds when needed, runs every vitest project once, and ends with the
// plain line `N passed, N failed` (plus skipped) counting the whole run, after the reliability summary line. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrap } from './bootstrap.mjs';
import { RELIABILITY_DIR, reliabilityLine, reliabilityTotals } from './reliability-summary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await bootstrap();
const report = join(root, '.vitest-report.json');
rmSync(report, { force: true });
// The reliability tests write their counts here; the line after the run sums them.
rmSync(RELIABILITY_DIR, { recursive: true, force: true });
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
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);
let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests ?? 0;
  failed = json.numFailedTests ?? 0;
  skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  // A file that fails to load has no tests to count: count it as a failure.
  for (const file of json.testResults ?? [])
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) failed++;
} else {
  failed = 1;
}
let reliability;
try {
  reliability = reliabilityLine(reliabilityTotals());
} catch (error) {
  reliability = `reliability: unreadable report (${error.message})`;
  failed++;
}
process.stdout.write(`\n${reliability}\n`);
const status = r.status === 0 && failed === 0 ? 0 : 1;
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(status);
