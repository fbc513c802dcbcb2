/**
 * The one way conch's tests of real processes wait for a condition: vitest's `vi.waitFor`, asked until the
 * condition holds. A bound on a condition, not a timed assertion: the time limit only turns a condition
 * that never comes into a failure that says what was awaited.
 */

import { vi } from 'vitest';

/** How {@link waitFor} waits. */
export interface WaitForOptions {
  /** Fail after this long (default 20 000 ms). */
  timeoutMs?: number;
  /** Ask again after this long (default 25 ms). */
  intervalMs?: number;
  /** What is awaited, for the failure message (default `condition`). */
  what?: string;
}

/** The values {@link waitFor} takes for "not yet". */
type NotYet = undefined | null | false | 0 | '';

/**
 * Calls `condition` until it returns (or resolves with) a truthy value, and resolves with that value. A
 * condition that throws has not held yet; when time runs out, the failure names `what` and the last error.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { timeoutMs = 20_000, intervalMs = 25, what = 'condition' }: WaitForOptions = {},
): Promise<Exclude<T, NotYet>> {
  let lastError: unknown;
  try {
    return await vi.waitFor(
      async () => {
        let value: T;
        try {
          value = await condition();
        } catch (error) {
          lastError = error;
          throw error;
        }
        if (!value) throw new Error(`${what}: not yet`);
        return value as Exclude<T, NotYet>;
      },
      { timeout: timeoutMs, interval: intervalMs },
    );
  } catch (error) {
    const last =
      lastError === undefined
        ? ''
        : `: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`, { cause: error });
  }
}
