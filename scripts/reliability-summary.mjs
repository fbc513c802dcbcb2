#!/usr/bin/env node
// Sums the reports the reliability tests write to `.reliability/<suite>.json` (numeric fields `faults`,
// `fuzzCases`, `bytesLost`, `leaks`; a missing field counts 0) and prints one line:
// `reliability: N faults survived, N fuzz cases, N bytes lost, N leaks`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory the reliability tests write their reports to. */
export const RELIABILITY_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '.reliability');

/** The summed counts of every report in `dir`. */
export function reliabilityTotals(dir = RELIABILITY_DIR) {
  const totals = { faults: 0, fuzzCases: 0, bytesLost: 0, leaks: 0 };
  if (!existsSync(dir)) return totals;
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const report = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    for (const key of Object.keys(totals)) {
      const value = report[key];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new Error(`${name}: ${key} must be a number, not ${JSON.stringify(value)}`);
      totals[key] += value;
    }
  }
  return totals;
}

/** The summary line for `totals`. */
export function reliabilityLine(t) {
  return `reliability: ${t.faults} faults survived, ${t.fuzzCases} fuzz cases, ${t.bytesLost} bytes lost, ${t.leaks} leaks`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${reliabilityLine(reliabilityTotals())}\n`);
}
