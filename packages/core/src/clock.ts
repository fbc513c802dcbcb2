/** An opaque timer handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/**
 * Time, injected. The core never reads the system clock or starts timers of its own: everything goes
 * through a Clock so that the waiting rules can be tested exactly with a fake one.
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch (monotonic for the real clock). */
  now(): number;
  /** Runs `callback` once after `ms` milliseconds. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  /** Cancels a timer; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
  /** Wall-clock time as an ISO string, for `created_at`-style fields. */
  isoNow(): string;
}

/** The real clock: `performance.now()` and the host's timers. Only faces and drivers construct it. */
export function createRealClock(): Clock {
  const g = globalThis as unknown as {
    performance: { now(): number };
    setTimeout(cb: () => void, ms: number): object;
    clearTimeout(h: object): void;
  };
  return {
    now: () => g.performance.now(),
    setTimeout: (cb, ms) => {
      const handle = g.setTimeout(cb, Math.max(0, ms));
      (handle as { unref?: () => void }).unref?.();
      return handle;
    },
    clearTimeout: (h) => g.clearTimeout(h as object),
    isoNow: () => new Date().toISOString(),
  };
}
