import { describe, expect, it } from 'vitest';
import type { ScreenRenderer, ScreenSnapshot } from '../driver.js';
import { createFakeEngine, settled } from '../testing/fake-engine.js';

/**
 * A small screen for these tests: it shows the text written since the cursor was last homed (`CSI H`),
 * one row per line, padded to the width like a terminal grid, escapes removed. Enough to tell what the
 * engine puts in a result; the real emulator (`@xterm/headless`) is tested in @conch/node.
 */
function gridScreen(cols: number, rows: number): ScreenRenderer {
  let text = '';
  let alt = false;
  return {
    write(chunk) {
      const s = new TextDecoder().decode(chunk);
      if (s.includes('\x1b[?1049h')) alt = true;
      if (s.includes('\x1b[?1049l')) alt = false;
      const home = s.lastIndexOf('\x1b[H');
      text = home >= 0 ? s.slice(home) : text + s;
    },
    resize() {},
    async snapshot(): Promise<ScreenSnapshot> {
      const lines = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split(/\r?\n/);
      const grid = Array.from({ length: rows }, (_, i) => (lines[i] ?? '').padEnd(cols).slice(0, cols));
      return { rows: grid, cursor: { row: 0, col: 0 }, alt_screen: alt, cols, rows_count: rows };
    },
    dispose() {},
  };
}

const setup = () => createFakeEngine({ screen: gridScreen });

/** Lets pending promise callbacks run without moving the fake clock. */
async function microtasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const padded = (row: string) => row.padEnd(200);

describe('full-screen programs (fake driver, fake clock)', () => {
  it('an alternate-screen editor: compact screen as output, prompt kind screen read off the screen', async () => {
    const { clock, driver, manager } = setup();
    driver.script('edit x.txt', (c) => {
      const rows = [
        'hello',
        ...Array.from({ length: 46 }, () => '~'),
        '',
        `"x.txt" 1L${' '.repeat(150)}1,1 All`,
      ];
      c.print(`\x1b[?1049h\x1b[H${rows.map(padded).join('\r\n')}`);
      c.setInputWait('polling');
      c.onInput((t) => {
        if (t === ':q\r') {
          c.print('\x1b[?1049l');
          c.exit(0);
        }
      });
    });
    const r = await settled(clock, manager.execute({ command: 'edit x.txt' }));
    expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', output_view: 'screen' });
    expect(r.prompt).toEqual({ kind: 'screen', text: '"x.txt" 1L 1,1 All' });
    expect(r.output.split('\n')[0]).toBe('hello');
    expect(r.output).not.toMatch(/ \n| $/);
    expect(r.output).not.toContain('\n\n\n');
    expect(r.output.length).toBeLessThan(300);
    const done = await settled(clock, manager.respond({ command_id: r.command_id, text: ':q' }));
    expect(done.status).toBe('completed');
    expect(done.output_view).toBeUndefined();
  });

  it('a program that repaints on a timer and polls the terminal is awaiting_input (screen), not streaming', async () => {
    const { clock, driver, manager } = setup();
    driver.script('top', (c) => {
      let frame = 0;
      const paint = () => {
        frame++;
        c.print(`\x1b[H\x1b[2Jtop - frame ${frame}, load average: 0.0\r\n\r\n  PID USER\r\n    1 root\r\n`);
        c.clock.setTimeout(paint, 1000);
      };
      c.setInputWait('polling');
      paint();
    });
    const r = await settled(clock, manager.execute({ command: 'top' }));
    expect(r.reason).toBe('awaiting_input');
    expect(r.prompt?.kind).toBe('screen');
    expect(r.output_view).toBe('screen');
    expect(r.output).toMatch(/^top - frame \d+, load average: 0\.0\n\n {2}PID USER\n {4}1 root$/);

    // A screen read answers at once: no time passes on the fake clock.
    let answered = false;
    const screenRead = manager.readOutput({ command_id: r.command_id, view: 'screen' }).then((x) => {
      answered = true;
      return x;
    });
    await microtasks();
    expect(answered).toBe(true);
    const screen = await screenRead;
    expect(screen.screen?.rows[0]).toMatch(/^top - frame/);
    // A text read while it waits at its screen shows the screen again, never a dump of stale redraws.
    const text = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
    expect(text.output_view).toBe('screen');
    expect(text.output).toMatch(/^top - frame \d+, load average: 0\.0\n\n {2}PID USER\n {4}1 root$/);
    await settled(clock, manager.killProcess({ command_id: r.command_id, grace_s: 0 }));
  });

  it('a program that cleared the display and polls is a screen prompt on its first frame', async () => {
    const { clock, driver, manager } = setup();
    driver.script('monitor', (c) => {
      c.print(`\x1b[H\x1b[2J${['monitor v1', '', '  PID USER'].map(padded).join('\r\n')}`);
      c.setInputWait('polling');
    });
    const r = await settled(clock, manager.execute({ command: 'monitor' }));
    expect(r).toMatchObject({ reason: 'awaiting_input', output_view: 'screen' });
    expect(r.prompt).toEqual({ kind: 'screen', text: 'PID USER' });
    expect(r.output).toBe('monitor v1\n\n  PID USER');
    expect(r.duration_ms).toBeLessThan(1000);
    await settled(clock, manager.killProcess({ command_id: r.command_id, grace_s: 0 }));
  });

  it('a single clear does not make a command full-screen', async () => {
    const { clock, driver, manager } = setup();
    driver.script('clear-then-ask', (c) => {
      c.print('\x1b[H\x1b[2J\x1b[3Jstep one\r\nName: ');
      c.setInputWait('blocked_read');
    });
    const r = await settled(clock, manager.execute({ command: 'clear-then-ask' }));
    expect(r.reason).toBe('awaiting_input');
    expect(r.output_view).toBeUndefined();
    expect(r.prompt?.kind).toBe('text');
    expect(r.output).toBe('step one\nName: ');
  });
});
