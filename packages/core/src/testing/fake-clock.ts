import type { Clock, TimerHandle } from '../clock.js';

interface FakeTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A clock for exact, instant tests: time moves only when the test calls {@link FakeClock.advance}.
 * Timers fire in order of their due time (then creation order), each at its exact time.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];
  private readonly epochMs: number;

  constructor(startMs = 0, epochMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
    this.epochMs = epochMs;
  }

  now(): number {
    return this.current;
  }

  isoNow(): string {
    return new Date(this.epochMs + this.current).toISOString();
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), callback };
    this.timers.push(timer);
    return { id: timer.id } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as unknown as { id: number }).id;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Number of pending timers. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Advances time by `ms`, firing every timer due on the way at its own time, and letting promise
   * callbacks run between timers (so async code reacting to a timer sees the right time).
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      const next = this.nextDue(target);
      if (!next) break;
      this.current = next.at;
      this.timers = this.timers.filter((t) => t !== next);
      next.callback();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** Runs microtasks without moving time. */
  async settle(): Promise<void> {
    await flushMicrotasks();
  }

  private nextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.at <= limit && (!best || t.at < best.at || (t.at === best.at && t.id < best.id))) best = t;
    }
    return best;
  }
}

/** Lets pending promise callbacks run (several rounds, for chains of awaits). */
export async function flushMicrotasks(rounds = 500): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
