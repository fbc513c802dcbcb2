/**
 * The reliability suite's reports: each reliability test file writes `<repo>/.reliability/<suite>.json`,
 * which the test command (`scripts/test.mjs`) sums into its line
 * `reliability: N faults survived, N fuzz cases, N bytes lost, N leaks`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What one reliability test file reports; a missing count is 0. */
export interface ReliabilityCounts {
  /** Faults injected that the server survived as documented. */
  faults?: number;
  /** Generated bad-input cases answered properly. */
  fuzzCases?: number;
  /** Output bytes missing from what a command printed. */
  bytesLost?: number;
  /** Resources (fds, terminals, processes, memory) not back to their baseline. */
  leaks?: number;
}

/** The repository's `.reliability` directory (this file is `packages/node/{src,dist}/testing/…`). */
export const RELIABILITY_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../../.reliability');

/**
 * Writes `<repo>/.reliability/<suite>.json` with `counts` (`<suite>.ps.json` in the test command's second
 * pass, with CONCH_PROCESS_FACTS=ps, so that both passes count).
 */
export function writeReliabilityReport(suite: string, counts: ReliabilityCounts): void {
  mkdirSync(RELIABILITY_DIR, { recursive: true });
  const pass = process.env.CONCH_PROCESS_FACTS === 'ps' ? '.ps' : '';
  writeFileSync(join(RELIABILITY_DIR, `${suite}${pass}.json`), `${JSON.stringify(counts)}\n`);
}
