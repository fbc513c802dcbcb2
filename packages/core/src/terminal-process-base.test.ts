import { describe, expect, it } from 'vitest';
import type { ExitInfo, KillReport } from './driver.js';
import { TerminalProcessBase } from './terminal-process-base.js';
import { FakeClock } from './testing/fake-clock.js';

/** The smallest driver on the base: what it writes waits for `take()`; `abandoned` counts give-ups. */
class Terminal extends TerminalProcessBase {
  readonly pid = 1;
  taken: string[] = [];
  abandoned = 0;
  released = 0;
  private pending: { bytes: Uint8Array; done: (error?: unknown) => void } | undefined;

  output(text: string): void {
    this.deliver(new TextEncoder().encode(text));
  }
  end(info: ExitInfo): void {
    this.deliverExit(info);
  }
  take(): void {
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      this.taken.push(new TextDecoder().decode(p.bytes));
      p.done();
    }
  }
  protected override writeBytes(bytes: Uint8Array, deadlineMs: number): Promise<void> {
    return this.withWriteDeadline(deadlineMs, (done) => {
      this.pending = { bytes, done };
      return () => {
        this.pending = undefined;
        this.abandoned++;
      };
    });
  }
  override resize(): void {}
  override async signal(): Promise<void> {}
  override async kill(): Promise<KillReport> {
    return { result: 'already_exited', survivors: [] };
  }
  protected override disposeResources(): void {
    this.released++;
  }
}

const decode = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join('');

describe('TerminalProcessBase', () => {
  it('keeps output that came before the first listener, and fires the exit only after it was delivered', async () => {
    const t = new Terminal(new FakeClock());
    t.output('early ');
    t.output('bytes');
    t.end({ exitCode: 0, signal: null });
    const exits: ExitInfo[] = [];
    t.onExit((info) => exits.push(info));
    await Promise.resolve();
    expect(exits).toEqual([]);
    const seen: Uint8Array[] = [];
    t.onData((c) => seen.push(c));
    expect(decode(seen)).toBe('early bytes');
    expect(exits).toEqual([{ exitCode: 0, signal: null }]);
  });

  it('replays the exit to a listener that comes late, and fires it once (the first end counts)', async () => {
    const t = new Terminal(new FakeClock());
    t.onData(() => {});
    const first: ExitInfo[] = [];
    t.onExit((info) => first.push(info));
    t.end({ exitCode: 3, signal: null });
    t.end({ exitCode: null, signal: 'SIGKILL' });
    expect(first).toEqual([{ exitCode: 3, signal: null }]);
    const late: ExitInfo[] = [];
    t.onExit((info) => late.push(info));
    await Promise.resolve();
    expect(late).toEqual([{ exitCode: 3, signal: null }]);
  });

  it('refuses writes after the end with COMMAND_FINISHED', async () => {
    const t = new Terminal(new FakeClock());
    t.end({ exitCode: 0, signal: null });
    await expect(t.write('x', 1000)).rejects.toMatchObject({ code: 'COMMAND_FINISHED' });
  });

  it('resolves a write the terminal takes, and rejects one it does not take with WRITE_TIMEOUT at the deadline', async () => {
    const clock = new FakeClock();
    const t = new Terminal(clock);
    const ok = t.write('taken', 1000);
    t.take();
    await expect(ok).resolves.toBeUndefined();
    expect(t.taken).toEqual(['taken']);
    const stuck = t.write('never', 1000);
    let settled = false;
    stuck.catch(() => {}).finally(() => (settled = true));
    await clock.advance(999);
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(stuck).rejects.toMatchObject({
      code: 'WRITE_TIMEOUT',
      message: 'The terminal did not accept input within 1000 ms.',
    });
    expect(t.abandoned).toBe(1);
  });

  it('disposes once: listeners and unread output dropped, the driver released', () => {
    const t = new Terminal(new FakeClock());
    const seen: Uint8Array[] = [];
    t.onData((c) => seen.push(c));
    t.dispose();
    t.dispose();
    t.output('after');
    expect(seen).toEqual([]);
    expect(t.released).toBe(1);
  });
});
