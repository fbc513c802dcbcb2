import { describe, expect, it } from 'vitest';
import { waitFor } from './wait-for.js';

describe('waitFor', () => {
  it('resolves with the first truthy value, asking again while the condition returns a falsy one', async () => {
    const answers = [undefined, false, 0, '', null, 'ready'];
    let asked = 0;
    await expect(waitFor(() => answers[asked++], { intervalMs: 1 })).resolves.toBe('ready');
    expect(asked).toBe(6);
  });

  it('takes a thrown error or a rejection for "not yet"', async () => {
    let asked = 0;
    const value = await waitFor(
      async () => {
        asked++;
        if (asked < 3) throw new Error('still starting');
        return asked;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
  });

  it('fails naming what was awaited and the last error', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('port 22 refused');
        },
        { timeoutMs: 50, intervalMs: 5, what: 'sshd to listen' },
      ),
    ).rejects.toThrow('timed out after 50 ms waiting for sshd to listen: port 22 refused');
    await expect(waitFor(() => false, { timeoutMs: 50, intervalMs: 5, what: 'a file' })).rejects.toThrow(
      'timed out after 50 ms waiting for a file',
    );
  });
});
