import { describe, expect, it } from 'vitest';
import { createFakeEngine, type FakeEngine, settled } from '../testing/fake-engine.js';
import type { AuditEntry, CommandPolicy } from './policy-hook.js';

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
    const { clock, manager } = createFakeEngine();
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
    const { clock, driver, manager } = createFakeEngine();
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
    const { clock, manager } = createFakeEngine();
    const s = await settled(clock, manager.createLocal({ name: 'w' }));
    const view = viewer();
    manager.attachTerminal(s.session_id, view.watcher);
    await settled(clock, manager.closeSession(s.session_id));
    expect(view.closed()).toBe(true);
    expect(() => manager.attachTerminal(s.session_id, viewer().watcher)).toThrow(/Invalid session_id/);
  });

  it('under a policy: read-only unless taking over, refused from a conch terminal, take-over audited', async () => {
    const audit: AuditEntry[] = [];
    const { clock, driver, manager } = createFakeEngine({
      policy: allowAll,
      audit: { record: (e) => audit.push(e) },
    });
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
    expect(audit).toContainEqual(
      expect.objectContaining({ kind: 'attach', decision: 'allow', input: 'take over' }),
    );
    // The line the person typed at the prompt is recorded as theirs (never as the agent's); the raw keys never.
    expect(audit.at(-1)).toMatchObject({ kind: 'attach', by: 'person', input: 'ls', decision: 'allow' });
    expect(JSON.stringify(audit)).not.toContain('ls\\r');
  });

  it('a watch-only view refuses keystrokes and counts as a viewer who does not type, policy or not', async () => {
    for (const policy of [undefined, allowAll]) {
      const { clock, driver, manager } = createFakeEngine(policy ? { policy } : {});
      await settled(clock, manager.execute({ command: 'true' }));
      const shell = driver.shells[0]!;
      const before = shell.written.length;
      const view = viewer();
      const watching = manager.attachTerminal('default', view.watcher, { watchOnly: true, takeOver: true });
      expect(watching.input).toBe(false);
      expect(watching.readOnlyReason).toMatch(/watch only/);
      await expect(watching.write('ls\r')).rejects.toMatchObject({ code: 'POLICY_DENIED' });
      expect(shell.written.length).toBe(before);
      expect(manager.getSession('default').sharing.typists).toBe(0);
      expect(manager.listSessions()[0]?.attached).toEqual({ viewers: 1, holds_terminal: false });
      const r = await settled(clock, manager.execute({ command: 'echo watched' }));
      expect(r).toMatchObject({ status: 'completed', output: 'watched' });
      expect(r.isolated).toBeUndefined();
      expect(view.seen()).toContain('watched');
      watching.detach();
      expect(manager.listSessions()[0]?.attached).toBeUndefined();
    }
  });

  it('without a policy a view from anywhere types', async () => {
    const { clock, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    expect(manager.attachTerminal('default', viewer().watcher, { fromConchTerminal: true }).input).toBe(true);
  });
});

describe('SessionManager.followOutput', () => {
  it('gives the output so far, then each new piece as printed, then a last call when the command ends', async () => {
    const { clock, driver, manager } = createFakeEngine();
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

/** A fake `cat > FILE` a person can start at the prompt: it keeps what is typed until Ctrl+D. */
function catInto(driver: FakeEngine['driver'], text: string): { file: () => string } {
  let file = '';
  driver.script(text, (c) => {
    c.setInputWait('blocked_read');
    c.onInput((data) => {
      const eof = data.indexOf('\u0004');
      file += eof >= 0 ? data.slice(0, eof) : data;
      if (eof >= 0) c.exit(0);
    });
  });
  return { file: () => file };
}

describe('a person and an agent sharing a session', () => {
  it("the person's program gets only the person's keys; the agent's command runs isolated and says why", async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const notes = catInto(driver, 'cat > notes');
    const view = viewer();
    const person = manager.attachTerminal('default', view.watcher);
    await person.write('cat > notes\r');
    await person.write('mine\r');

    const agent = await settled(clock, manager.execute({ command: 'echo agent' }));
    expect(agent).toMatchObject({
      status: 'completed',
      exit_code: 0,
      output: 'agent',
      isolated: true,
      held_by_person: true,
    });
    expect(manager.listSessions()[0]).toMatchObject({
      state: 'busy',
      attached: { viewers: 1, holds_terminal: true },
    });
    expect(view.seen()).not.toContain('__conch');

    await person.write('more\r\u0004');
    expect(notes.file()).toBe('mine\rmore\r');
    const back = await settled(clock, manager.execute({ command: 'echo back' }));
    expect(back).toMatchObject({ status: 'completed', output: 'back' });
    expect(back.isolated).toBeUndefined();
    expect(manager.listSessions()[0]).toMatchObject({
      state: 'idle',
      attached: { viewers: 1, holds_terminal: false },
    });
    person.detach();
    expect(manager.listSessions()[0]?.attached).toBeUndefined();
  });

  it("a half-typed line stays the person's: the agent's command runs isolated, the line completes unchanged", async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const person = manager.attachTerminal('default', viewer().watcher);
    await person.write('echo hal');
    const agent = await settled(clock, manager.execute({ command: 'echo agent' }));
    expect(agent).toMatchObject({ output: 'agent', isolated: true, held_by_person: true });
    const before = shell.written.length;
    await person.write('f\r');
    expect(shell.written.slice(before)).toEqual(['f\r']);
    // The shell got the person's line exactly, and nothing of the agent's on it.
    expect(shell.written.filter((w) => !w.startsWith(' __conch_s')).join('')).toBe('echo half\r');
    const back = await settled(clock, manager.execute({ command: 'echo back' }));
    expect(back.isolated).toBeUndefined();
  });

  it('holds a person’s keys typed while the agent’s line is being typed, and types them after it', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const person = manager.attachTerminal('default', viewer().watcher);
    const agent = manager.execute({ command: 'echo agent' });
    const typed = person.write('x');
    await settled(clock, agent);
    await typed;
    const agentAt = shell.written.findIndex((w) => w.startsWith(' __conch_s'));
    expect(agentAt).toBeGreaterThanOrEqual(0);
    expect(shell.written.indexOf('x')).toBeGreaterThan(agentAt);
  });

  it('after the person detaches, a program they left running still holds the terminal', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    catInto(driver, 'cat');
    const person = manager.attachTerminal('default', viewer().watcher);
    await person.write('cat\r');
    person.detach();
    const agent = await settled(clock, manager.execute({ command: 'echo agent' }));
    expect(agent).toMatchObject({ isolated: true, held_by_person: true });
    expect(manager.listSessions()[0]).toMatchObject({
      state: 'busy',
      attached: { viewers: 0, holds_terminal: true },
    });
  });

  it('type-ahead typed during the agent’s command is waited for: free once the shell is seen reading again', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const person = manager.attachTerminal('default', viewer().watcher);
    const slow = await settled(clock, manager.execute({ command: 'sleep 2', pause_timeout: 0.5 }));
    expect(slow.status).toBe('partial');
    await person.write('ls\r');
    await clock.advance(2000);
    // The shell is not seen waiting at its prompt yet (it may be running the person's `ls`).
    shell.evidence = 'no';
    expect(await settled(clock, manager.execute({ command: 'echo a' }))).toMatchObject({
      isolated: true,
      held_by_person: true,
    });
    shell.evidence = 'blocked_read';
    const free = await settled(clock, manager.execute({ command: 'echo b' }));
    expect(free.isolated).toBeUndefined();
  });

  it('keys typed into a full-screen program leave no unfinished line behind it', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    driver.script('vim', (c) => {
      c.print('\u001b[?1049h\u001b[H~\r\n');
      c.onInput((data) => {
        if (data.includes('ZZ')) {
          c.print('\u001b[?1049l');
          c.exit(0);
        }
      });
    });
    const person = manager.attachTerminal('default', viewer().watcher);
    await person.write('vim\r');
    await person.write('ihello\u001b');
    expect((await settled(clock, manager.execute({ command: 'echo a' }))).held_by_person).toBe(true);
    await person.write('ZZ');
    const free = await settled(clock, manager.execute({ command: 'echo b' }));
    expect(free.isolated).toBeUndefined();
  });

  it("records the person's line at the prompt as the person's, never what they type into a program", async () => {
    const audit: AuditEntry[] = [];
    const { clock, driver, manager } = createFakeEngine({ audit: { record: (e) => audit.push(e) } });
    await settled(clock, manager.execute({ command: 'true' }));
    catInto(driver, 'read -s pw');
    const person = manager.attachTerminal('default', viewer().watcher);
    await person.write('read -s pw\r');
    await person.write('hunter2\r\u0004');
    await settled(clock, manager.execute({ command: 'echo agent' }));
    expect(audit.filter((e) => e.kind === 'attach')).toEqual([
      expect.objectContaining({
        by: 'person',
        input: 'read -s pw',
        session_id: 'default',
        decision: 'allow',
      }),
    ]);
    expect(audit.filter((e) => e.kind === 'execute').map((e) => e.input)).toEqual(['true', 'echo agent']);
    expect(audit.some((e) => e.by === 'person' && e.kind === 'execute')).toBe(false);
    expect(JSON.stringify(audit)).not.toContain('hunter2');
  });

  it('tells viewers of each agent command as it starts, typed or isolated', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    catInto(driver, 'cat');
    const starts: unknown[] = [];
    const person = manager.attachTerminal('default', {
      onOutput: () => {},
      onCommand: (c) => starts.push(c),
    });
    const typed = await settled(clock, manager.execute({ command: 'echo one' }));
    await person.write('cat\r');
    const isolated = await settled(clock, manager.execute({ command: 'echo two' }));
    expect(starts).toEqual([
      {
        command_id: typed.command_id,
        text: 'echo one',
        isolated: false,
        background: false,
        held_by_person: false,
      },
      {
        command_id: isolated.command_id,
        text: 'echo two',
        isolated: true,
        background: false,
        held_by_person: true,
      },
    ]);
  });
});

describe('no ghosts: a typed line that never reached the shell', () => {
  it('is never awaiting_input, and ends saying a program holding the terminal read it', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    // A program conch was not told about takes the terminal and reads it (the race the checks cannot see).
    let taken = '';
    shell.setInputListener((data) => {
      taken += data;
    });
    shell.ownGroup = false;
    shell.evidence = 'blocked_read';
    const r = await settled(clock, manager.execute({ command: 'echo lost', pause_timeout: 5 }));
    expect(taken).toContain('__conch_s');
    expect(r).toMatchObject({ status: 'completed', state: 'lost', exit_code: null, swallowed: true });
    expect(r.reason).toBe('exited');
    expect(manager.listCommands().processes.some((p) => p.state === 'awaiting_input')).toBe(false);
    // The session goes on: the next command (the program gone) is typed into the shell again.
    shell.setInputListener(undefined);
    shell.ownGroup = true;
    shell.evidence = 'no';
    const next = await settled(clock, manager.execute({ command: 'echo next' }));
    expect(next).toMatchObject({ status: 'completed', output: 'next' });
    expect(next.isolated).toBeUndefined();
  });

  it('kill_process before it started signals nothing of the program that holds the terminal', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    shell.setInputListener(() => {});
    shell.ownGroup = false;
    const r = await settled(clock, manager.execute({ command: 'echo x', pause_timeout: 0.1 }));
    expect(r).toMatchObject({ status: 'partial', state: 'running' });
    const killed = await settled(clock, manager.killProcess({ command_id: r.command_id }));
    expect(killed.result).toBe('killed');
    expect(shell.killed).toEqual([]);
  });
});
