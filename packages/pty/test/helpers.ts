import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Live (non-zombie) processes whose environment carries `NAME=value`. */
export function pidsWithEnv(name: string, value: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z') continue;
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if (env.includes(`${name}=${value}`)) out.push(pid);
    } catch {
      // gone or not readable
    }
  }
  return out;
}

/** Number of live processes marked with CONCH_COMMAND_ID=id. */
export function countMarked(id: string): number {
  return pidsWithEnv('CONCH_COMMAND_ID', id).length;
}

/** Counts one reliability test file reports (see `scripts/reliability-summary.mjs`); missing = 0. */
export interface ReliabilityCounts {
  faults?: number;
  fuzzCases?: number;
  bytesLost?: number;
  leaks?: number;
}

/** Writes `<repo>/.reliability/<suite>.json`, which the test command sums into its reliability line. */
export function writeReliabilityReport(suite: string, counts: ReliabilityCounts): void {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '../../../.reliability');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${suite}.json`), `${JSON.stringify(counts)}\n`);
}
