import { describe, expect, it } from 'vitest';
import { LostSignal } from './lost-signal.js';

describe('LostSignal', () => {
  it('fires once with its reason, to the listeners still subscribed', () => {
    const signal = new LostSignal();
    const heard: string[] = [];
    signal.onLost((r) => heard.push(`a:${r}`));
    const b = signal.onLost((r) => heard.push(`b:${r}`));
    b.dispose();
    expect(signal.lost).toBe(false);
    expect(signal.fire('gone')).toBe(true);
    expect(signal.fire('again')).toBe(false);
    expect(heard).toEqual(['a:gone']);
    expect(signal.lost).toBe(true);
    expect(signal.reason).toBe('gone');
  });

  it('settles before the listeners hear of it, with the signal already lost', () => {
    const signal = new LostSignal();
    const order: string[] = [];
    signal.onLost(() => order.push('listener'));
    signal.fire('gone', () => order.push(`settle lost=${signal.lost}`));
    expect(order).toEqual(['settle lost=true', 'listener']);
  });

  it('tells a late listener the reason on the next microtask, not during onLost', async () => {
    const signal = new LostSignal();
    signal.fire('closed');
    const heard: string[] = [];
    signal.onLost((r) => heard.push(r));
    expect(heard).toEqual([]);
    await Promise.resolve();
    expect(heard).toEqual(['closed']);
  });
});
