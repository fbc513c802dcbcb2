import { describe, expect, it } from 'vitest';
import { capOutput, DEFAULT_DELEGATE_TIMEOUT_S, delegateTaskInput } from './params.js';

describe('capOutput', () => {
  it('keeps short text and says what it cut from long text', () => {
    expect(capOutput('short', 10)).toBe('short');
    const capped = capOutput('x'.repeat(25), 10);
    expect(capped.startsWith('x'.repeat(10))).toBe(true);
    expect(capped).toContain('[output cut: 15 of 25 characters omitted]');
  });
});

describe('delegateTaskInput', () => {
  it('applies the defaults and refuses bad values', () => {
    expect(delegateTaskInput.parse({ task: 't', dir: '/tmp' })).toEqual({
      task: 't',
      dir: '/tmp',
      agent: 'build',
      timeout_s: DEFAULT_DELEGATE_TIMEOUT_S,
    });
    expect(delegateTaskInput.safeParse({ task: 't', dir: '/tmp', model: 'no-slash' }).success).toBe(false);
    expect(delegateTaskInput.safeParse({ task: 't', dir: '/tmp', agent: 'general' }).success).toBe(false);
    expect(delegateTaskInput.safeParse({ task: 't', dir: '/tmp', timeout_s: 0 }).success).toBe(false);
    expect(delegateTaskInput.safeParse({ task: 't', dir: '/tmp', extra: 1 }).success).toBe(false);
  });
});
