import { describe, expect, it } from 'vitest';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeDriver } from '../testing/fake-driver.js';
import type { AuditEntry, CommandPolicy } from './policy-hook.js';
import { SessionManager, type SessionManagerOptions } from './session-manager.js';

function setup(options: Partial<SessionManagerOptions> = {}) {
  const clock = new FakeClock();
  const driver = new FakeDriver({ clock });
  const manager = new SessionManager({ clock, localDriver: driver, ...options });
  return { clock, driver, manager };
}

async function settled<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let out: { v?: T; e?: unknown; done: boolean } = { done: false };
  promise.then(
    (v) => {
      out = { v, done: true };
    },
    (e) => {
      out = { e, done: true };
    },
  );
  for (let i = 0; i < 100 && !out.done; i++) await clock.advance(100);
  if (!out.done) throw new Error('did not settle');
  if ('e' in out) throw out.e;
  return out.v as T;
}

const allowAll: CommandPolicy = {
  active: true,
  evaluate: (command) => ({
    decision: 'allow',
    reason: 'allowed',
    commands: [{ text: command, argv: [command], decision: 'allow' }],
  }),
};

function viewer() {
  let seen = '';
  let closed = false;
  const decoder = new TextDecoder();
  return {
    watcher: {
      onOutput: (bytes: Uint8Array) => {
        seen += decoder.decode(bytes, { stream: true });
      },
      onClose: () => {
        closed = true;
      },
    },
    seen: () => seen,
    closed: () => closed,
  };
}

describe('SessionManager.attachTerminal', () => {
  it("shows the agent's command as its own text, never conch's typed line or markers, and its output", async () => {
    const { clock, manager } = setup();
    await settled(clock, manager.execute({ command: 'true' }));
    const view = viewer();
    const attachment = manager.attachTerminal('default', view.watcher);
    expect(attachment.input).toBe(true);
    const r = await settled(clock, manager.execute({ command: 'echo agent-output' }));
    expect(r).toMatchObject({ status: 'completed', exit_code: 0, output: 'agent-output' });
    expect(view.seen()).toContain('echo agent-output\r\nagent-output');
    expect(view.seen()).not.toContain('__conch');
    expect(view.seen()).not.toContain('\u001b]6973;');
    attachment.detach();
    await settled(clock, manager.execute({ command: 'echo after-detach' }));
    expect(view.seen()).not.toContain('after-detach');
  });

  it('types raw keystrokes into the terminal, resizes it and restores the size on detach', async () => {
    const { clock, driver, manager } = setup();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const { cols, rows } = manager.getSession('default');
    const attachment = manager.attachTerminal('default', viewer().watcher);
    await attachment.write('ls\r');
    expect(shell.written.join('')).toContain('ls\r');
    attachment.resize(132, 43);
    expect(manager.getSession('default')).toMatchObject({ cols: 132, rows: 43 });
    attachment.resize(100_000, 0);
    expect(manager.getSession('default')).toMatchObject({ cols: manager.limits.maxCols, rows: 1 });
    attachment.detach();
    expect(manager.getSession('default')).toMatchObject({ cols, rows });
    await expect(attachment.write('x')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('tells the viewer when the shell ends', async () => {
    const { clock, manager } = setup();
    const s = await settled(clock, manager.createLocal({ name: 'w' }));
    const view = viewer();
    manager.attachTerminal(s.session_id, view.watcher);
    await settled(clock, manager.closeSession(s.session_id));
    expect(view.closed()).toBe(true);
    expect(() => manager.attachTerminal(s.session_id, viewer().watcher)).toThrow(/Invalid session_id/);
  });

  it('under a policy: read-only unless taking over, refused from a conch terminal, take-over audited', async () => {
    const audit: AuditEntry[] = [];
    const { clock, driver, manager } = setup({ policy: allowAll, audit: { record: (e) => audit.push(e) } });
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const before = shell.written.length;

    const watching = manager.attachTerminal('default', viewer().watcher);
    expect(watching.input).toBe(false);
    expect(watching.readOnlyReason).toMatch(/policy/);
    await expect(watching.write('rm -rf x\r')).rejects.toMatchObject({ code: 'POLICY_DENIED' });
    expect(shell.written.length).toBe(before);

    expect(() =>
      manager.attachTerminal('default', viewer().watcher, { takeOver: true, fromConchTerminal: true }),
    ).toThrow(/inside a terminal conch manages/);
    expect(audit.at(-1)).toMatchObject({ kind: 'attach', decision: 'deny', session_id: 'default' });

    const person = manager.attachTerminal('default', viewer().watcher, { takeOver: true });
    expect(person.input).toBe(true);
    await person.write('ls\r');
    expect(shell.written.join('')).toContain('ls\r');
    expect(audit.at(-1)).toMatchObject({ kind: 'attach', decision: 'allow', input: 'take over' });
    expect(JSON.stringify(audit)).not.toContain('ls\\r');
  });

  it('without a policy a view from anywhere types', async () => {
    const { clock, manager } = setup();
    await settled(clock, manager.execute({ command: 'true' }));
    expect(manager.attachTerminal('default', viewer().watcher, { fromConchTerminal: true }).input).toBe(true);
  });
});

describe('SessionManager.followOutput', () => {
  it('gives the output so far, then each new piece as printed, then a last call when the command ends', async () => {
    const { clock, driver, manager } = setup();
    driver.script('ticker', (c) => {
      c.print('one\r\n');
      c.clock.setTimeout(() => c.print('two\r\n'), 1000);
      c.clock.setTimeout(() => c.exit(5), 2000);
    });
    const started = await settled(clock, manager.execute({ command: 'ticker', pause_timeout: 0.5 }));
    expect(started.status).toBe('partial');
    const reads: { text: string; state: string }[] = [];
    const following = manager.followOutput(started.command_id, 0, (read) =>
      reads.push({ text: read.text, state: read.state }),
    );
    expect(reads).toEqual([{ text: 'one\r\n', state: 'running' }]);
    await clock.advance(1000);
    expect(reads.map((r) => r.text).join('')).toBe('one\r\ntwo\r\n');
    await clock.advance(1000);
    expect(reads.at(-1)?.state).toBe('exited');
    const count = reads.length;
    following.dispose();
    // Following an ended command: one call with everything, nothing after.
    const again: string[] = [];
    manager.followOutput(started.command_id, 0, (read) => again.push(read.text)).dispose();
    expect(again).toEqual(['one\r\ntwo\r\n']);
    expect(reads.length).toBe(count);
    expect(() => manager.followOutput('c_nosuchid00', 0, () => {})).toThrow(/c_nosuchid00/);
  });
});
