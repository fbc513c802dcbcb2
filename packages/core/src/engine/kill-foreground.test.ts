import { describe, expect, it } from 'vitest';
import { createFakeEngine, settled } from '../testing/fake-engine.js';

/**
 * kill_process on a command typed into the session's shell: the job is killed, and the shell itself is
 * interrupted only when it goes on without reporting the command's end (a loop). A signal that reaches
 * the shell after it reported the end would interrupt the next command typed into it.
 */
describe('kill_process on a foreground command', () => {
  it('does not interrupt a shell that reports the end of its killed job by itself', async () => {
    const { clock, driver, manager } = createFakeEngine();
    // A job that dies of its signal; the shell reaps it and reports a moment later, as a real one does.
    driver.script('serve', (c) => {
      c.onSignal((signal) => c.clock.setTimeout(() => c.exit(signal === 'SIGTERM' ? 143 : 130), 20));
    });
    const r = await settled(clock, manager.execute({ command: 'serve', pause_timeout: 0.5 }));
    expect(r).toMatchObject({ status: 'partial', state: 'running' });
    const shell = driver.shells[0]!;
    // A signal from kill_process takes a while to be sent, as over a remote host's round trip.
    shell.signalDelayMs = 50;
    const killed = await settled(clock, manager.killProcess({ command_id: r.command_id }));
    expect(killed).toMatchObject({ result: 'killed' });
    expect(shell.killed).toEqual(['SIGTERM']);
    // Nothing of the kill is still on its way to the shell: the next command runs whole.
    const next = await settled(clock, manager.execute({ command: 'echo after' }));
    await clock.advance(1000);
    expect(shell.killed).toEqual(['SIGTERM']);
    expect(next).toMatchObject({ status: 'completed', output: 'after', exit_code: 0 });
  });

  it('interrupts a shell that goes on after its job died, and has sent that signal when it returns', async () => {
    const { clock, driver, manager } = createFakeEngine();
    // A loop: its job's death does not end it; Ctrl+C (SIGINT to the shell) does.
    driver.script('loop', (c) => {
      c.onSignal((signal) => {
        if (signal === 'SIGINT') c.exit(130);
      });
    });
    const r = await settled(clock, manager.execute({ command: 'loop', pause_timeout: 0.5 }));
    const shell = driver.shells[0]!;
    shell.signalDelayMs = 50;
    const killed = await settled(clock, manager.killProcess({ command_id: r.command_id }));
    expect(killed).toMatchObject({ result: 'killed' });
    expect(shell.killed).toEqual(['SIGTERM', 'SIGINT']);
    const next = await settled(clock, manager.execute({ command: 'echo after' }));
    expect(next).toMatchObject({ status: 'completed', output: 'after', exit_code: 0 });
    expect(shell.killed).toEqual(['SIGTERM', 'SIGINT']);
  });

  it('kills a command the shell already runs although its start marker has not arrived yet', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    driver.script('serve', (c) => c.onSignal(() => c.exit(143)));
    // What the shell prints takes 200 ms to arrive; pause_timeout 0 returns as soon as the line is typed.
    shell.outputDelayMs = 200;
    const r = await settled(clock, manager.execute({ command: 'serve', pause_timeout: 0 }));
    expect(r).toMatchObject({ status: 'partial', state: 'running' });
    // The shell runs it: its program holds the terminal, the start marker still on its way.
    shell.ownGroup = false;
    const killed = await settled(clock, manager.killProcess({ command_id: r.command_id }));
    expect(killed.result).toBe('killed');
    expect(shell.killed).toEqual(['SIGTERM']);
    shell.ownGroup = true;
    const after = await settled(clock, manager.readOutput({ command_id: r.command_id, pause_timeout: 1 }));
    expect(after).toMatchObject({ status: 'completed', state: 'killed', exit_code: 143 });
  });

  it('takes back a line the shell never read, so that the killed command never runs', async () => {
    const { clock, driver, manager } = createFakeEngine();
    await settled(clock, manager.execute({ command: 'true' }));
    const shell = driver.shells[0]!;
    let ran = 0;
    driver.script('serve', () => {
      ran++;
    });
    // The shell is slow to read what is typed: the line waits in the terminal.
    shell.holdLines = true;
    const r = await settled(clock, manager.execute({ command: 'serve', pause_timeout: 0 }));
    expect(r).toMatchObject({ status: 'partial', state: 'running' });
    const killed = await settled(clock, manager.killProcess({ command_id: r.command_id }));
    expect(killed.result).toBe('killed');
    expect(shell.written.at(-1)).toBe('\x03');
    shell.releaseLines();
    const next = await settled(clock, manager.execute({ command: 'echo after' }));
    expect(next).toMatchObject({ status: 'completed', output: 'after' });
    expect(next.isolated).toBeUndefined();
    expect(ran).toBe(0);
  });
});
