/**
 * docs/waiting.md, rule by rule, with the fake clock and the fake driver: exact and instant.
 */
import { describe, expect, it } from 'vitest';
import type { FakeClock } from '../testing/fake-clock.js';
import { createFakeEngine } from '../testing/fake-engine.js';
import type { SessionManager } from './session-manager.js';

/** Tracks a promise so a test can ask whether it has settled yet. */
function track<T>(promise: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  promise.then(
    (value) => {
      state.done = true;
      state.value = value;
    },
    (error) => {
      state.done = true;
      state.error = error;
    },
  );
  return state;
}

async function started(manager: SessionManager, clock: FakeClock) {
  // Create the default session up front so timings below start from a ready shell.
  const p = track(manager.execute({ command: 'true' }));
  await clock.advance(0);
  expect(p.done).toBe(true);
}

describe('Waiter (docs/waiting.md)', () => {
  it('returns at once when the command exits, with all of its output', async () => {
    const { clock, driver, manager } = createFakeEngine();
    driver.script('quick', (c) => {
      c.print('one\r\ntwo\r\n');
      c.exit(0);
    });
    const r = track(manager.execute({ command: 'quick' }));
    await clock.advance(0);
    expect(r.done).toBe(true);
    expect(r.value).toMatchObject({
      status: 'completed',
      reason: 'exited',
      exit_code: 0,
      output: 'one\ntwo',
      duration_ms: 0,
    });
  });

  it('silence: a silent command returns by pause_timeout, however small total_timeout is', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('silent', () => {});
    const r = track(manager.execute({ command: 'silent', pause_timeout: 2, total_timeout: 0.5 }));
    await clock.advance(1999);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.done).toBe(true);
    expect(r.value).toMatchObject({
      status: 'partial',
      reason: 'silence',
      state: 'running',
      duration_ms: 2000,
    });
  });

  it('raising total_timeout does not lengthen a silent wait', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('silent', () => {});
    const r = track(manager.execute({ command: 'silent', pause_timeout: 1, total_timeout: 3600 }));
    await clock.advance(1000);
    expect(r.value?.reason).toBe('silence');
  });

  it('the silence clock restarts at every byte', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('late', (c) => {
      c.clock.setTimeout(() => c.print('x'), 1500);
    });
    const r = track(manager.execute({ command: 'late', pause_timeout: 2, total_timeout: 20 }));
    await clock.advance(3499);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value).toMatchObject({ reason: 'silence', output: 'x', duration_ms: 3500 });
  });

  it('total_timeout binds while output streams', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('stream', (c) => {
      let i = 0;
      const tick = () => {
        c.print(`tick ${i++}\r\n`);
        c.clock.setTimeout(tick, 500);
      };
      c.clock.setTimeout(tick, 500);
    });
    const r = track(manager.execute({ command: 'stream', pause_timeout: 2, total_timeout: 3 }));
    await clock.advance(2999);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value).toMatchObject({ status: 'partial', reason: 'total_timeout', duration_ms: 3000 });
    expect(r.value?.output.split('\n')).toHaveLength(6);
  });

  it('total_timeout needs output during this call, then returns at its moment', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('once', (c) => {
      c.clock.setTimeout(() => c.print('early\r\n'), 100);
    });
    const r = track(manager.execute({ command: 'once', pause_timeout: 5, total_timeout: 1 }));
    await clock.advance(999);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value?.reason).toBe('total_timeout');
  });

  it('pause_timeout 0 returns at once with whatever is buffered', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('buffered', (c) => c.print('already here\r\n'));
    const r = track(manager.execute({ command: 'buffered', pause_timeout: 0 }));
    await clock.advance(0);
    expect(r.value).toMatchObject({ status: 'partial', reason: 'silence', output: 'already here' });
  });

  it('awaiting_input: kernel evidence of a blocked read plus a quiet prompt_settle', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('ask', (c) => {
      c.print('Password: ');
      c.setInputWait('blocked_read');
      c.onInput((text) => {
        c.print('\r\n');
        c.print(`len ${text.replace(/\r$/, '').length}\r\n`);
        c.exit(0);
      });
    });
    const r = track(manager.execute({ command: 'ask', pause_timeout: 9 }));
    await clock.advance(299);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value).toMatchObject({
      status: 'partial',
      reason: 'awaiting_input',
      state: 'awaiting_input',
      prompt: { kind: 'password', text: 'Password:' },
    });
    const answer = track(manager.respond({ command_id: r.value!.command_id, text: 's3cret', secret: true }));
    await clock.advance(0);
    // The leading newline ends the partly returned prompt line: concatenated results are the transcript.
    expect(answer.value).toMatchObject({ status: 'completed', output: '\nlen 6' });
  });

  it('a prompt-looking line is not a prompt while the program is busy elsewhere', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('fake-prompt', (c) => {
      c.print('Continue? [Y/n] ');
      c.setInputWait('no');
    });
    const r = track(manager.execute({ command: 'fake-prompt', pause_timeout: 2 }));
    await clock.advance(2000);
    expect(r.value?.reason).toBe('silence');
  });

  it('without kernel evidence (ssh), only certain prompt kinds count', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('yn', (c) => {
      c.print('Continue? [Y/n] ');
      c.setInputWait('unknown');
    });
    driver.script('name', (c) => {
      c.print('Name: ');
      c.setInputWait('unknown');
    });
    const yn = track(manager.execute({ command: 'yn', pause_timeout: 2 }));
    await clock.advance(300);
    expect(yn.value).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'yes_no' } });
    const name = track(manager.execute({ command: 'name', pause_timeout: 2 }));
    await clock.advance(2000);
    expect(name.value?.reason).toBe('silence');
  });

  it('pytest-style "collecting ..." is not a prompt even when quiet', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('pytest', (c) => {
      c.print('collecting ... ');
      c.setInputWait('no');
    });
    const r = track(manager.execute({ command: 'pytest', pause_timeout: 1 }));
    await clock.advance(1000);
    expect(r.value?.reason).toBe('silence');
  });

  it('until_matched: a regex over output that arrived in this call', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('server', (c) => {
      c.print('booting\r\n');
      c.clock.setTimeout(() => c.print('listening on :8080\r\n'), 700);
    });
    const r = track(manager.execute({ command: 'server', until: 'listening on :\\d+', pause_timeout: 9 }));
    await clock.advance(699);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value).toMatchObject({ reason: 'until_matched', status: 'partial' });
    // A match in output already returned does not count again.
    const again = track(
      manager.readOutput({ command_id: r.value!.command_id, until: 'listening', pause_timeout: 1 }),
    );
    await clock.advance(1000);
    expect(again.value?.reason).toBe('silence');
  });

  it('cancelled: the call ends, the command keeps running', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('long', () => {});
    const controller = new AbortController();
    const r = track(manager.execute({ command: 'long', pause_timeout: 60 }, { signal: controller.signal }));
    await clock.advance(500);
    controller.abort();
    await clock.advance(0);
    expect(r.value).toMatchObject({ reason: 'cancelled', state: 'running', status: 'partial' });
    expect(manager.listCommands({ include_finished: false }).processes).toHaveLength(1);
  });

  it('sends progress at least every 2 s with the newest line', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('progress', (c) => {
      c.print('step 1\r\n');
      c.clock.setTimeout(() => c.print('step 2\r\n'), 1500);
    });
    const seen: Array<{ elapsed_ms: number; message: string }> = [];
    track(manager.execute({ command: 'progress', pause_timeout: 5 }, { onProgress: (p) => seen.push(p) }));
    await clock.advance(4000);
    expect(seen.map((p) => p.elapsed_ms)).toEqual([1000, 2000, 3000, 4000]);
    expect(seen[0]?.message).toBe('step 1');
    expect(seen[1]?.message).toBe('step 2');
  });

  it('background: returns after the start-up probe with reason background', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('daemon', (c) => c.print('started\r\n'));
    const r = track(manager.execute({ command: 'daemon', background: true }));
    await clock.advance(299);
    expect(r.done).toBe(false);
    await clock.advance(1);
    expect(r.value).toMatchObject({
      status: 'partial',
      reason: 'background',
      isolated: true,
      output: 'started',
    });
    const quick = track(manager.execute({ command: 'echo done', background: true }));
    await clock.advance(0);
    expect(quick.value).toMatchObject({ status: 'completed', reason: 'exited', output: 'done' });
  });

  it('read_output continues where the last call stopped, without duplicates', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await started(manager, clock);
    driver.script('two-phase', (c) => {
      c.print('first\r\n');
      c.clock.setTimeout(() => {
        c.print('second\r\n');
        c.exit(5);
      }, 3000);
    });
    const r = track(manager.execute({ command: 'two-phase', pause_timeout: 1 }));
    await clock.advance(1000);
    expect(r.value).toMatchObject({ output: 'first', status: 'partial' });
    const more = track(manager.readOutput({ command_id: r.value!.command_id, pause_timeout: 9 }));
    await clock.advance(2000);
    expect(more.value).toMatchObject({ output: 'second', status: 'completed', exit_code: 5 });
    const again = await manager.readOutput({ command_id: r.value!.command_id });
    expect(again).toMatchObject({ output: '', status: 'completed', reason: 'exited' });
  });

  it('rejects out-of-range timeouts naming the value and the range', async () => {
    const { manager } = createFakeEngine();
    for (const bad of [-1, 3601, Number.NaN]) {
      await expect(manager.execute({ command: 'true', pause_timeout: bad })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('pause_timeout'),
      });
    }
    await expect(manager.execute({ command: 'true', total_timeout: 5000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      hint: expect.stringContaining('0 to 3600'),
    });
    await expect(manager.execute({ command: 'true', until: '(' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('decideAwaiting (kernel evidence × classifier)', () => {
  it('trusts a blocked terminal read, labelling it by the prompt or the last line', async () => {
    const { decideAwaiting } = await import('./waiter.js');
    expect(decideAwaiting('blocked_read', undefined, 'Enter value')).toEqual({
      kind: 'text',
      text: 'Enter value',
    });
    expect(decideAwaiting('blocked_read', { kind: 'password', text: 'Password:' }, 'x')?.kind).toBe(
      'password',
    );
  });

  it('needs more than a poll: a prompt, a pager or REPL program, or a full-screen app', async () => {
    const { decideAwaiting } = await import('./waiter.js');
    expect(decideAwaiting('polling', undefined, 'serving on :3000')).toBeUndefined();
    expect(decideAwaiting('polling', undefined, 'file.txt', { program: 'less' })?.kind).toBe('pager');
    expect(decideAwaiting('polling', undefined, '', { program: 'python3.11' })?.kind).toBe('repl');
    expect(decideAwaiting('polling', undefined, '', { program: 'vim', fullScreen: true })?.kind).toBe(
      'screen',
    );
    expect(
      decideAwaiting('polling', undefined, 'load average', { program: 'top', fullScreen: true }),
    ).toEqual({
      kind: 'screen',
      text: 'load average',
    });
    // A program that cleared the display and polls has drawn its first full-screen frame.
    expect(decideAwaiting('polling', undefined, 'PID USER', { program: 'top', cleared: true })?.kind).toBe(
      'screen',
    );
    expect(decideAwaiting('polling', undefined, '', { program: 'python3', cleared: true })?.kind).toBe(
      'repl',
    );
    expect(decideAwaiting('blocked_read', undefined, 'x', { cleared: true })?.kind).toBe('text');
    // A certain prompt on a full-screen program's screen is still that prompt.
    const password = { kind: 'password' as const, text: 'Password:' };
    expect(decideAwaiting('polling', password, 'Password:', { fullScreen: true })).toEqual(password);
    expect(decideAwaiting('polling', { kind: 'repl', text: '>>>' }, '>>>')?.kind).toBe('repl');
  });

  it('without evidence trusts only certain kinds; "no" is never awaiting', async () => {
    const { decideAwaiting } = await import('./waiter.js');
    expect(decideAwaiting('unknown', { kind: 'text', text: 'Name:' }, 'Name:')).toBeUndefined();
    expect(decideAwaiting('unknown', { kind: 'yes_no', text: '[Y/n]' }, '')?.kind).toBe('yes_no');
    expect(decideAwaiting('no', { kind: 'password', text: 'Password:' }, '')).toBeUndefined();
  });
});
