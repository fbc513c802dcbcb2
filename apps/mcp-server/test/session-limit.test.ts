/**
 * The session limit counts each session once: sessions opened at the same moment are all accepted up to
 * the limit, and the refusal beyond it names the right count.
 */

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ServerHandle, startServer } from './harness.js';

describe('the session limit under concurrent create_local', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--max-sessions', '6'] });
  });
  afterAll(async () => {
    await h?.close();
  });

  test('six at once are all opened; the seventh is refused naming six of six', async () => {
    const opened = await Promise.all(Array.from({ length: 6 }, () => h.call('create_local', {})));
    for (const r of opened) expect(r.error?.message, r.text).toBeUndefined();
    const seventh = await h.call('create_local', {});
    expect(seventh.error?.code).toBe('LIMIT_REACHED');
    expect(seventh.error?.message).toContain('6 of 6');
  });
});
