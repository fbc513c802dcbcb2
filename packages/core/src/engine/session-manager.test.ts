import { describe, expect, it } from 'vitest';
import { ConchError } from '../errors.js';
import { createFakeEngine, settled } from '../testing/fake-engine.js';
import type { CommandPolicy, PolicyDecision } from './policy-hook.js';

describe('SessionManager', () => {
  it('creates the default session on first use, named and id "default"', async () => {
    const { clock, manager } = createFakeEngine();
    expect(manager.listSessions()).toEqual([]);
    const r = await settled(clock, manager.execute({ command: 'echo hi' }));
    expect(r).toMatchObject({ session_id: 'default', output: 'hi', exit_code: 0 });
    const [s] = manager.listSessions();
    expect(s).toMatchObject({
      session_id: 'default',
      name: 'default',
      kind: 'local',
      state: 'idle',
      shell: '/bin/bash',
    });
    expect(s?.command_ids).toEqual([r.command_id]);
  });

  it('ids have the documented shapes', async () => {
    const { clock, manager } = createFakeEngine();
    const s = await settled(clock, manager.createLocal({ name: 'work' }));
    expect(s.session_id).toMatch(/^s_[a-z2-7]{8}$/);
    expect(s.name).toBe('work');
    const r = await settled(clock, manager.execute({ command: 'true', session_id: s.session_id }));
    expect(r.command_id).toMatch(/^c_[a-z2-7]{10}$/);
  });

  it('a session reference is its id, else its unique name; an ambiguous name names the ids', async () => {
    const { clock, manager } = createFakeEngine();
    const work = await settled(clock, manager.createLocal({ name: 'work' }));
    const r = await settled(clock, manager.execute({ command: 'echo hi', session_id: 'work' }));
    expect(r.session_id).toBe(work.session_id);
    expect(manager.listCommands({ session_id: 'work' }).processes.map((p) => p.command_id)).toEqual([
      r.command_id,
    ]);
    // An id wins over a name: a session named like another's id does not take its place.
    const impostor = await settled(clock, manager.createLocal({ name: work.session_id }));
    expect(manager.getSession(work.session_id).id).toBe(work.session_id);
    const twin = await settled(clock, manager.createLocal({ name: 'work' }));
    const ambiguous = (() => {
      try {
        manager.getSession('work');
      } catch (error) {
        return error as ConchError;
      }
      throw new Error('an ambiguous name was accepted');
    })();
    expect(ambiguous.code).toBe('INVALID_ARGUMENT');
    expect(ambiguous.message).toContain(work.session_id);
    expect(ambiguous.message).toContain(twin.session_id);
    const scratch = await settled(clock, manager.createLocal({ name: 'scratch' }));
    const closed = await settled(clock, manager.closeSession('scratch'));
    expect(closed.session_id).toBe(scratch.session_id);
    expect(manager.listSessions().map((s) => s.session_id)).not.toContain(scratch.session_id);
    expect(impostor.name).toBe(work.session_id);
    await expect(settled(clock, manager.closeSession('nope'))).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
  });

  it('tracks cwd after completed foreground commands, and cwd= runs a cd first', async () => {
    const { clock, manager } = createFakeEngine();
    const cd = await settled(clock, manager.execute({ command: 'cd /srv' }));
    expect(cd.cwd).toBe('/srv');
    const pwd = await settled(clock, manager.execute({ command: 'pwd', cwd: '/etc' }));
    expect(pwd).toMatchObject({ output: '/etc', cwd: '/etc' });
    expect(manager.listSessions()[0]?.cwd).toBe('/etc');
  });

  it('says cwd_changed only when a foreground command changed the cwd', async () => {
    const { clock, manager } = createFakeEngine();
    const cd = await settled(clock, manager.execute({ command: 'cd /srv' }));
    expect(cd).toMatchObject({ cwd: '/srv', cwd_changed: true });
    const again = await settled(clock, manager.execute({ command: 'cd /srv' }));
    expect(again.cwd).toBe('/srv');
    expect(again).not.toHaveProperty('cwd_changed');
    const echo = await settled(clock, manager.execute({ command: 'echo hi' }));
    expect(echo).not.toHaveProperty('cwd_changed');
    const moved = await settled(clock, manager.execute({ command: 'pwd', cwd: '/etc' }));
    expect(moved).toMatchObject({ cwd: '/etc', cwd_changed: true });
  });

  it('caps the output of a call at the engine default of lines as well as characters', async () => {
    const { clock, driver, manager } = createFakeEngine({ defaults: { maxOutputLines: 10 } });
    driver.script('seq 1 100', (c) => {
      c.print(Array.from({ length: 100 }, (_, k) => `${k + 1}\r\n`).join(''));
      c.exit(0);
    });
    const r = await settled(clock, manager.execute({ command: 'seq 1 100' }));
    expect(r.output.split('\n')).toHaveLength(11);
    expect(r.output_info).toMatchObject({ truncated: true, omitted_lines: 90 });
  });

  it('runs a command isolated when the session shell is busy', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('hold', () => {});
    const held = await settled(clock, manager.execute({ command: 'hold', pause_timeout: 1 }));
    expect(held.status).toBe('partial');
    expect(manager.listSessions()[0]).toMatchObject({
      state: 'busy',
      foreground_command_id: held.command_id,
    });
    const iso = await settled(clock, manager.execute({ command: 'echo side' }));
    expect(iso).toMatchObject({ status: 'completed', isolated: true, output: 'side' });
    expect(iso.cwd).toBeUndefined();
  });

  it('marks the session closed when its shell exits and recreates only the default session', async () => {
    const { clock, manager } = createFakeEngine();
    const s = await settled(clock, manager.createLocal());
    const r = await settled(clock, manager.execute({ command: 'exit 3', session_id: s.session_id }));
    expect(r).toMatchObject({ status: 'completed', exit_code: 3, session_ended: true });
    expect(manager.listSessions().find((x) => x.session_id === s.session_id)?.state).toBe('closed');
    await expect(manager.execute({ command: 'true', session_id: s.session_id })).rejects.toMatchObject({
      code: 'SESSION_CLOSED',
    });
    const plain = await settled(clock, manager.execute({ command: 'echo first' }));
    expect(plain.session_ended).toBeUndefined();
    expect(plain.new_shell).toBeUndefined();
    const ended = await settled(clock, manager.execute({ command: 'exit 0' }));
    expect(ended).toMatchObject({ exit_code: 0, session_ended: true });
    const again = await settled(clock, manager.execute({ command: 'echo back' }));
    expect(again).toMatchObject({ session_id: 'default', output: 'back', new_shell: true });
    // Said once, by the first result in the new shell.
    const next = await settled(clock, manager.execute({ command: 'echo more' }));
    expect(next.new_shell).toBeUndefined();
  });

  it('gives the documented errors for unknown ids, finished commands and bad keys', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await expect(manager.readOutput({ command_id: 'c_nope' })).rejects.toMatchObject({
      code: 'COMMAND_NOT_FOUND',
      message: 'Invalid command_id: "c_nope".',
    });
    await expect(manager.execute({ command: 'true', session_id: 's_missing' })).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    const done = await settled(clock, manager.execute({ command: 'true' }));
    await expect(manager.respond({ command_id: done.command_id, text: 'x' })).rejects.toMatchObject({
      code: 'COMMAND_FINISHED',
    });
    driver.script('hold', () => {});
    const held = await settled(clock, manager.execute({ command: 'hold', pause_timeout: 0 }));
    const shell = driver.shells[0]!;
    const before = shell.written.length;
    const err = await manager
      .sendControl({ command_id: held.command_id, key: ['ctrl+c', 'hyper+q'] })
      .catch((e) => e);
    expect(ConchError.is(err) && err.code).toBe('INVALID_ARGUMENT');
    expect(String(err.message)).toContain('hyper+q');
    expect(shell.written.length).toBe(before);
    const killed = await manager.killProcess({ command_id: done.command_id });
    expect(killed.result).toBe('already_exited');
  });

  it('rejects oversize input and empty commands', async () => {
    const { manager } = createFakeEngine({ limits: { maxInputBytes: 1000 } });
    await expect(manager.execute({ command: 'x'.repeat(2000) })).rejects.toMatchObject({
      code: 'LIMIT_REACHED',
    });
    await expect(manager.execute({ command: '  ' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('limits sessions and live commands', async () => {
    const { clock, driver, manager } = createFakeEngine({ limits: { maxSessions: 2, maxLiveCommands: 2 } });
    await settled(clock, manager.createLocal());
    await settled(clock, manager.createLocal());
    await expect(manager.createLocal()).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
    const sid = manager.listSessions()[0]!.session_id;
    driver.script('hold', () => {});
    await settled(clock, manager.execute({ command: 'hold', session_id: sid, pause_timeout: 0 }));
    await settled(clock, manager.execute({ command: 'hold', session_id: sid, pause_timeout: 0 }));
    await expect(manager.execute({ command: 'hold', session_id: sid })).rejects.toMatchObject({
      code: 'LIMIT_REACHED',
    });
  });

  it('counts sessions still opening against the limit', async () => {
    const { clock, manager } = createFakeEngine({ limits: { maxSessions: 1 } });
    const both = await settled(clock, Promise.allSettled([manager.createLocal(), manager.createLocal()]));
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ code: 'LIMIT_REACHED' });
  });

  it('prunes finished commands after 30 minutes and beyond the newest 200', async () => {
    const { clock, manager } = createFakeEngine({ limits: { retainFinished: 3 } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await settled(clock, manager.execute({ command: `echo ${i}` }))).command_id);
      await clock.advance(1);
    }
    const kept = manager.listCommands().processes.map((p) => p.command_id);
    expect(kept).toEqual(ids.slice(2));
    await expect(manager.readOutput({ command_id: ids[0]! })).rejects.toMatchObject({
      code: 'COMMAND_NOT_FOUND',
    });
    expect((await manager.readOutput({ command_id: ids[4]! })).status).toBe('completed');
    await clock.advance(31 * 60 * 1000);
    expect(manager.listCommands().processes).toEqual([]);
  });

  it('keeps the commands that ended last, whatever order they started in', async () => {
    const { clock, manager } = createFakeEngine({ limits: { retainFinished: 1 } });
    const slow = await settled(clock, manager.execute({ command: 'sleep 5', background: true }));
    const quick = await settled(clock, manager.execute({ command: 'echo quick' }));
    expect(quick.status).toBe('completed');
    await clock.advance(6000);
    const kept = manager.listCommands().processes.map((p) => p.command_id);
    expect(kept).toEqual([slow.command_id]);
    await expect(manager.readOutput({ command_id: quick.command_id })).rejects.toMatchObject({
      code: 'COMMAND_NOT_FOUND',
    });
  });

  it('masks secret input that a program echoes back', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('echo-back', (c) => {
      c.print('Token: ');
      c.setInputWait('blocked_read');
      c.onInput((t) => {
        c.print(`you typed ${t.replace('\r', '')}\r\n`);
        c.exit(0);
      });
    });
    const r = await settled(clock, manager.execute({ command: 'echo-back' }));
    expect(r.reason).toBe('awaiting_input');
    const done = await settled(
      clock,
      manager.respond({ command_id: r.command_id, text: 'tok-123456', secret: true }),
    );
    expect(done.output).toBe('you typed [secret]');
    const page = await manager.readOutput({ command_id: r.command_id, offset: 0, view: 'text' });
    expect(page.output).not.toContain('tok-123456');
  });

  it('lists and filters processes', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('hold', () => {});
    const a = await settled(clock, manager.execute({ command: 'hold', pause_timeout: 0 }));
    await settled(clock, manager.execute({ command: 'echo x' }));
    const live = manager.listCommands({ include_finished: false }).processes;
    expect(live.map((p) => p.command_id)).toEqual([a.command_id]);
    expect(manager.listCommands({ filter: 'ECHO' }).processes).toHaveLength(1);
    expect(live[0]).toMatchObject({ command: 'hold', state: 'running', background: false, isolated: false });
  });

  it('close_session kills what runs in it and forgets its commands', async () => {
    const { clock, driver, manager } = createFakeEngine();
    const s = await settled(clock, manager.createLocal());
    driver.script('hold', () => {});
    const fg = await settled(
      clock,
      manager.execute({ command: 'hold', session_id: s.session_id, pause_timeout: 0 }),
    );
    const bg = await settled(
      clock,
      manager.execute({ command: 'hold', session_id: s.session_id, background: true }),
    );
    const closed = await settled(clock, manager.closeSession(s.session_id));
    expect(closed.closed).toBe(true);
    expect(closed.killed_command_ids.sort()).toEqual([fg.command_id, bg.command_id].sort());
    expect(manager.listSessions()).toEqual([]);
    await expect(manager.readOutput({ command_id: fg.command_id })).rejects.toMatchObject({
      code: 'COMMAND_NOT_FOUND',
    });
  });

  it('denies by policy before anything runs, and checks text typed into a shell', async () => {
    const policy: CommandPolicy = {
      active: true,
      evaluate(command: string): PolicyDecision {
        const bad = /\brm\b/.test(command);
        return {
          decision: bad ? 'deny' : 'allow',
          reason: bad ? 'rm is denied by rule "rm"' : 'allowed',
          commands: [
            {
              text: command,
              argv: command.split(' '),
              decision: bad ? 'deny' : 'allow',
              ...(bad ? { rule: 'rm' } : {}),
            },
          ],
        };
      },
    };
    const audit: unknown[] = [];
    const { clock, driver, manager } = createFakeEngine({ policy, audit: { record: (e) => audit.push(e) } });
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const before = shell.written.length;
    await expect(manager.execute({ command: 'rm -rf x' })).rejects.toMatchObject({
      code: 'POLICY_DENIED',
      data: expect.objectContaining({ rule: 'rm', command: 'rm -rf x' }),
    });
    expect(shell.written.length).toBe(before);
    expect(manager.checkCommand('rm x').decision).toBe('deny');
    // A shell started by an allowed command: what is typed into it is checked too, even in pieces.
    driver.script('subshell', (c) => {
      c.setInputWait('blocked_read');
      c.onInput(() => {});
    });
    const sub = await settled(clock, manager.execute({ command: 'subshell', pause_timeout: 0 }));
    shell.foreground = 'bash';
    await settled(
      clock,
      manager.respond({ command_id: sub.command_id, text: 'r', enter: false, pause_timeout: 0 }),
    );
    await expect(
      manager.respond({ command_id: sub.command_id, text: 'm -rf x', pause_timeout: 0 }),
    ).rejects.toMatchObject({
      code: 'POLICY_DENIED',
    });
    expect(shell.written.join('')).not.toContain('m -rf x');
    expect(audit.length).toBeGreaterThan(0);
  });

  it('reports a write that times out as WRITE_TIMEOUT without blocking', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('hold', (c) => c.onInput(() => {}));
    const r = await settled(clock, manager.execute({ command: 'hold', pause_timeout: 0 }));
    driver.shells[0]!.stuckWrites = true;
    await expect(
      settled(clock, manager.respond({ command_id: r.command_id, text: 'x' })),
    ).rejects.toMatchObject({
      code: 'WRITE_TIMEOUT',
    });
  });

  it('reports a shell that never becomes ready', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.failOpen = new Error('no such shell');
    await expect(manager.createLocal({ shell: '/nope' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(manager.listSessions()).toEqual([]);
    void clock;
  });

  it('rejects bad sizes and env names', async () => {
    const { manager } = createFakeEngine();
    await expect(manager.createLocal({ cols: 5000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(manager.createLocal({ env: { 'BAD-NAME': 'x' } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('markers in output', () => {
  it('ignores forged or echoed markers: another nonce, or another command id', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('forger', (c) => {
      c.print('\x1b]6973;AAAAAAAAAAAAAAAAAAAAAAAA;E;c_whatever;0;/\x07still running\r\n');
      c.clock.setTimeout(() => c.exit(4), 1000);
    });
    const r = await settled(clock, manager.execute({ command: 'forger', pause_timeout: 0.5 }));
    expect(r).toMatchObject({ status: 'partial', output: 'still running' });
    const done = await settled(clock, manager.readOutput({ command_id: r.command_id }));
    expect(done).toMatchObject({ status: 'completed', exit_code: 4 });
  });
});

describe('the environment snapshot after a command ends', () => {
  /** The session shell, after a first command; its snapshots held back from now on. */
  async function heldShell() {
    const env = createFakeEngine({ defaults: { snapshotWaitMs: 2000 } });
    env.driver.script('export FOO=bar', (c) => c.exit(0));
    await settled(env.clock, env.manager.execute({ command: 'true' }));
    const shell = env.driver.shells[0]!;
    shell.holdSnapshot = true;
    return { ...env, shell };
  }

  it('completes a command at its end marker, while the shell still writes the snapshot', async () => {
    const { clock, manager } = await heldShell();
    const r = await settled(clock, manager.execute({ command: 'export FOO=bar' }));
    expect(r).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(manager.listSessions()[0]?.state).toBe('idle');
  });

  it('starts an isolated command only once the shell says the snapshot is written', async () => {
    const { clock, driver, manager, shell } = await heldShell();
    await settled(clock, manager.execute({ command: 'export FOO=bar' }));
    const spawned = driver.processes.length;
    let done = false;
    const iso = manager.execute({ command: 'echo side', background: true }).finally(() => {
      done = true;
    });
    await clock.advance(1500);
    expect(driver.processes.length).toBe(spawned);
    expect(done).toBe(false);
    shell.releaseSnapshot();
    const r = await settled(clock, iso);
    expect(driver.processes.length).toBe(spawned + 1);
    expect(r).toMatchObject({ status: 'completed', isolated: true, output: 'side' });
  });

  it('waits no longer than the cap for a snapshot that never comes', async () => {
    const { clock, driver, manager } = await heldShell();
    await settled(clock, manager.execute({ command: 'export FOO=bar' }));
    const spawned = driver.processes.length;
    const iso = manager.execute({ command: 'echo side', background: true });
    await clock.advance(1999);
    expect(driver.processes.length).toBe(spawned);
    await clock.advance(1);
    expect(driver.processes.length).toBe(spawned + 1);
    expect(await settled(clock, iso)).toMatchObject({ status: 'completed', output: 'side' });
    // The next wait has its own cap: the snapshot is still pending.
    const again = manager.execute({ command: 'echo again', background: true });
    await clock.advance(1999);
    expect(driver.processes.length).toBe(spawned + 1);
    expect(await settled(clock, again)).toMatchObject({ status: 'completed', output: 'again' });
  });

  it('gives isolated commands the last snapshot written whole, a file the shell is never told to rewrite', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    const envFile = manager.getSession('default').envFile;
    /** The snapshot slot typed with the latest command. */
    const typedSlot = () => Number(/ __conch_s \w+(?: (\d+))?;/.exec(shell.written.at(-1)!)![1] ?? 0);
    /** Runs a foreground command; the slot its snapshot goes to. */
    const foreground = async () => {
      await settled(clock, manager.execute({ command: 'true' }));
      return typedSlot();
    };
    /** Starts an isolated command; the env file it loads. */
    const isolated = async () => {
      await settled(clock, manager.execute({ command: 'echo side', background: true }));
      return driver.processes.at(-1)!.args.at(-4);
    };
    const file = (slot: number) => (slot === 0 ? envFile : `${envFile}.${slot}`);
    // Slot 0 holds the start-up snapshot, so the first command wrote slot 1; the slots then alternate.
    expect(typedSlot()).toBe(1);
    expect(await isolated()).toBe(file(1));
    expect(await foreground()).toBe(0);
    expect(await isolated()).toBe(file(0));
    // An isolated command still loading slot 0 (no start marker yet) keeps the shell off it.
    driver.holdStarts = true;
    expect(await isolated()).toBe(file(0));
    expect(await foreground()).toBe(1);
    expect(await foreground()).toBe(2);
    expect(await foreground()).toBe(1);
    driver.releaseStarts();
    await clock.settle();
    expect(await foreground()).toBe(0);
    expect(await isolated()).toBe(file(0));
    // A snapshot the shell could not write whole (a full disk) is never loaded.
    shell.snapshotStatus = 1;
    expect(await foreground()).toBe(1);
    expect(await isolated()).toBe(file(0));
    shell.snapshotStatus = 0;
    expect(await foreground()).toBe(1);
    expect(await isolated()).toBe(file(1));
    // The session's end removes every slot's file.
    for (const slot of [0, 1, 2]) driver.files.set(file(slot), '');
    await settled(clock, manager.closeSession('default'));
    expect([0, 1, 2].filter((slot) => driver.files.has(file(slot)))).toEqual([]);
  });

  it('ends the wait when the shell starts its next command or dies', async () => {
    const { clock, driver, manager, shell } = await heldShell();
    await settled(clock, manager.execute({ command: 'export FOO=bar' }));
    driver.script('hold', () => {});
    // A start marker: the shell is past its snapshot (an interrupted one never says it is written).
    const held = await settled(clock, manager.execute({ command: 'hold', pause_timeout: 1 }));
    expect(held.status).toBe('partial');
    const spawned = driver.processes.length;
    const iso = manager.execute({ command: 'echo side' });
    await clock.settle();
    expect(driver.processes.length).toBe(spawned + 1);
    expect(await settled(clock, iso)).toMatchObject({ isolated: true, output: 'side' });
    // The shell dies while a snapshot is pending: the isolated command starts at once.
    const s = await settled(clock, manager.createLocal());
    await settled(clock, manager.execute({ command: 'true', session_id: s.session_id }));
    const other = driver.shells.at(-1)!;
    expect(other).not.toBe(shell);
    other.holdSnapshot = true;
    await settled(clock, manager.execute({ command: 'export FOO=bar', session_id: s.session_id }));
    const before = driver.processes.length;
    const late = manager.execute({ command: 'echo late', session_id: s.session_id, background: true });
    await clock.advance(100);
    expect(driver.processes.length).toBe(before);
    other.finish({ exitCode: 0, signal: null });
    await clock.settle();
    expect(driver.processes.length).toBe(before + 1);
    expect(await settled(clock, late)).toMatchObject({ output: 'late' });
  });
});

describe('input for a command whose line the shell has not read yet', () => {
  it('waits for the shell to read the line (else a Ctrl+C would throw the line away), up to the write deadline', async () => {
    const { clock, driver, manager } = createFakeEngine({ defaults: { writeDeadlineMs: 5000 } });
    driver.script('cat', (c) =>
      c.onInput((t) => {
        c.print(t.replace('\r', ''));
        c.exit(0);
      }),
    );
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    shell.holdLines = true;
    const r = await settled(clock, manager.execute({ command: 'cat', pause_timeout: 1 }));
    expect(r.status).toBe('partial');
    let answered = false;
    const sent = manager
      .respond({ command_id: r.command_id, text: 'hello', pause_timeout: 1 })
      .finally(() => {
        answered = true;
      });
    await clock.advance(4000);
    expect(shell.written.join('')).not.toContain('hello');
    expect(answered).toBe(false);
    // The shell reads the line and starts the command: the input follows it.
    shell.releaseLines();
    const done = await settled(clock, sent);
    expect(shell.written.at(-1)).toBe('hello\r');
    expect(done.output).toBe('hello');
    // A shell that never reads the line: the input goes after the write deadline, as any write would.
    shell.holdLines = true;
    const stuck = await settled(
      clock,
      manager.execute({ command: 'cat', session_id: 'default', pause_timeout: 1 }),
    );
    expect(stuck.isolated).toBeUndefined();
    const late = manager.sendControl({ command_id: stuck.command_id, key: 'C-c', pause_timeout: 1 });
    await clock.advance(4999);
    expect(shell.written.at(-1)).not.toBe('\x03');
    await clock.advance(1);
    expect(shell.written.at(-1)).toBe('\x03');
    await settled(clock, late);
  });
});
