import type { Disposable } from '../driver.js';

/** A minimal typed event source whose `on` returns a Disposable (node-pty style). */
export class Emitter<T> {
  private listeners = new Set<(value: T) => void>();

  /** Subscribes; dispose the result to unsubscribe. */
  on(listener: (value: T) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Calls every listener; a throwing listener does not stop the others. */
  emit(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // A listener's failure must not break the stream for the others.
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.listeners.clear();
  }
}
