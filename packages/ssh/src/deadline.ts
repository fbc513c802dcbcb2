/** A deadline for connecting that can be paused while a person confirms a host key. */
export class Deadline {
  private remaining: number;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private paused = 0;
  private readonly onExpire: () => void;
  /** True once it expired or was cleared. */
  expired = false;

  /** Starts a deadline of `ms` milliseconds that calls `onExpire` when it passes. */
  constructor(ms: number, onExpire: () => void) {
    this.remaining = ms;
    this.onExpire = onExpire;
    this.arm();
  }

  private arm(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => {
      this.expired = true;
      this.onExpire();
    }, this.remaining);
  }

  /** Stops the clock (pauses nest: it runs again after as many `resume` calls). */
  pause(): void {
    if (this.paused++ > 0 || this.expired) return;
    clearTimeout(this.timer);
    this.remaining = Math.max(0, this.remaining - (Date.now() - this.startedAt));
  }

  /** Starts the clock again with the time that was left. */
  resume(): void {
    if (--this.paused > 0 || this.expired) return;
    this.arm();
  }

  /** Stops it for good: it never expires. */
  clear(): void {
    clearTimeout(this.timer);
    this.expired = true;
  }
}
