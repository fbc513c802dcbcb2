/**
 * The engine as the core's own tests run it: a {@link SessionManager} over the {@link FakeDriver} on the
 * {@link FakeClock}, and {@link settled}, which moves that clock until a promise of the engine settles.
 */

import { SessionManager, type SessionManagerOptions } from '../engine/session-manager.js';
import { FakeClock } from './fake-clock.js';
import { FakeDriver } from './fake-driver.js';

/** A session manager over a fake driver, both on one fake clock. */
export interface FakeEngine {
  readonly clock: FakeClock;
  readonly driver: FakeDriver;
  readonly manager: SessionManager;
}

/**
 * Creates a {@link SessionManager} whose local driver is a new {@link FakeDriver}, both on a new
 * {@link FakeClock}; `options` are passed on to the manager (its clock and local driver are these).
 */
export function createFakeEngine(
  options: Partial<Omit<SessionManagerOptions, 'clock' | 'localDriver'>> = {},
): FakeEngine {
  const clock = new FakeClock();
  const driver = new FakeDriver({ clock });
  const manager = new SessionManager({ ...options, clock, localDriver: driver });
  return { clock, driver, manager };
}

/**
 * Advances `clock` by 100 ms at a time (at most `steps` times) until `promise` settles; resolves or
 * rejects as it did. Throws `did not settle` when it has not settled by then.
 */
export async function settled<T>(clock: FakeClock, promise: Promise<T>, steps = 100): Promise<T> {
  let out: { v?: T; e?: unknown; done: boolean } = { done: false };
  promise.then(
    (v) => {
      out = { v, done: true };
    },
    (e) => {
      out = { e, done: true };
    },
  );
  for (let i = 0; i < steps && !out.done; i++) await clock.advance(100);
  if (!out.done) throw new Error('did not settle');
  if ('e' in out) throw out.e;
  return out.v as T;
}
