/**
 * The "host is gone" signal of a driver whose host can vanish under it (an SSH connection, a container):
 * it fires once with the reason; a listener added after that hears the reason on the next microtask.
 */

import type { Disposable } from '../driver.js';

/** Once-only "lost" state with its listeners (see the module doc). */
export class LostSignal {
  private readonly listeners = new Set<(reason: string) => void>();
  private why: string | undefined;

  /** True once {@link fire} was called. */
  get lost(): boolean {
    return this.why !== undefined;
  }

  /** Why the host was lost, once it was. */
  get reason(): string | undefined {
    return this.why;
  }

  /** Calls `listener` with the reason when the host is lost (at once, asynchronously, if it already is). */
  onLost(listener: (reason: string) => void): Disposable {
    if (this.why !== undefined) {
      const reason = this.why;
      queueMicrotask(() => listener(reason));
      return { dispose: () => {} };
    }
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * Marks the host lost, runs `settle` (what must already see the host as lost, e.g. ending its terminals,
   * before anyone hears of it), then calls every listener once. False (and nothing runs) when it already was.
   */
  fire(reason: string, settle?: () => void): boolean {
    if (this.why !== undefined) return false;
    this.why = reason;
    settle?.();
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener(reason);
    return true;
  }
}
