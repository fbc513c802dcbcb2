import { describe, expect, it } from 'vitest';
import { ConchError } from '../errors.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeDriver } from '../testing/fake-driver.js';
import { retentionWords } from './command-registry.js';
import { SessionManager } from './session-manager.js';

describe('CommandRegistry', () => {
  it('words the retention from the configured limits', () => {
    expect(retentionWords({ retainMs: 30 * 60_000, retainFinished: 200 })).toBe(
      'finished > 30 min ago or beyond the newest 200',
    );
    expect(retentionWords({ retainMs: 90_000, retainFinished: 5 })).toBe(
      'finished > 90 s ago or beyond the newest 5',
    );
  });

  it('says in the unknown-id hint how long finished commands are kept, as configured', async () => {
    const clock = new FakeClock();
    const manager = new SessionManager({
      clock,
      localDriver: new FakeDriver({ clock }),
      limits: { retainMs: 90_000, retainFinished: 5 },
    });
    const error = await manager.readOutput({ command_id: 'c_unknown' }).catch((e: unknown) => e);
    expect(ConchError.is(error)).toBe(true);
    expect((error as ConchError).hint).toContain('pruned (finished > 90 s ago or beyond the newest 5)');
  });
});
