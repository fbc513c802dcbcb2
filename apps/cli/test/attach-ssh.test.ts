/**
 * One terminal, two hands over SSH: a person attached (the built `conch attach`, on a real pseudo-terminal)
 * to an SSH session of the daemon, against a real sshd on 127.0.0.1 from `@conch/ssh/testing`, while
 * `conch exec -s SID` plays the agent. The same rule as locally: while the person's program or unfinished line
 * holds the terminal, the agent's command runs isolated; nothing of it reaches the person's program or line.
 */

import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { waitFor } from '@conch/core/testing';
import { describe, expect, it } from 'vitest';
import { conchOnTty } from './harness.js';
import { isolatedForPerson, sharedSession } from './share-helpers.js';
import { useSshHome } from './ssh-home.js';

const ssh = useSshHome();

/** True while a process of this name writes to `file` (the sshd runs on this machine). */
function running(name: string, file: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'latin1').trim() !== name) continue;
      if (readlinkSync(`/proc/${entry}/fd/1`) === file) return true;
    } catch {
      // gone
    }
  }
  return false;
}

describe('a person and an agent in the same SSH session', () => {
  it("the person's program and half-typed line get nothing of the agent's; its commands run isolated meanwhile", async () => {
    const { fx, sshd, home } = ssh;
    const connected = await home.conch([
      'ssh',
      `${fx.user}@127.0.0.1:${sshd.port}`,
      '-i',
      fx.keys.plain,
      '--host-key-policy',
      'accept-new',
    ]);
    expect(connected.code).toBe(0);
    const sid = /s_[a-z0-9]+/.exec(connected.stdout)?.[0];
    expect(sid).toBeDefined();
    const shared = sharedSession(home, sid);
    const view = conchOnTty(['attach', sid!], home.env as Record<string, string>);
    await waitFor(() => view.text.includes(`attached to ${sid}`), { timeoutMs: 60_000, what: 'attached' });

    const notes = `/tmp/conch-share-ssh-${process.pid}.txt`;
    rmSync(notes, { force: true });
    try {
      view.term.write(`cat > ${notes}\r`);
      await waitFor(() => running('cat', notes), { what: 'cat runs on the remote host' });
      view.term.write('person line\r');
      const agent = await shared.exec('echo agent-$((40+2)); exit 5');
      expect(agent).toMatchObject(isolatedForPerson('agent-42', 5));
      expect((await shared.sessions())[0]).toMatchObject({
        state: 'busy',
        attached: { viewers: 1, holds_terminal: true },
      });
      view.term.write('\u0004');
      await waitFor(() => !running('cat', notes), { what: 'cat ended' });
      expect(readFileSync(notes, 'utf8')).toBe('person line\n');
      await shared.expectNoneAwaitingInput();

      view.term.write('echo half-');
      await waitFor(() => view.text.includes('echo half-'), { what: 'the half line is echoed' });
      const aside = await shared.exec('echo aside');
      expect(aside).toMatchObject(isolatedForPerson('aside'));
      view.term.write('typed\r');
      await waitFor(() => /(?<!echo )half-typed\r/.test(view.text), {
        what: 'the person line ran unchanged',
      });
      await expect.poll(async () => (await shared.exec('echo in-shell')).isolated).toBeUndefined();
      expect(view.text).not.toContain('__conch');
      await shared.expectNoneAwaitingInput();
    } finally {
      if (existsSync(notes)) rmSync(notes, { force: true });
    }
  }, 180_000);
});
