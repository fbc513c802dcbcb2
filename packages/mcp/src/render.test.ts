import type { LeanCommandResult } from '@conch/core';
import { describe, expect, test } from 'vitest';
import { commandStatusLine, renderCommandResult } from './render.js';

const ID = 'c_abcdefghij';

const done = (fields: Partial<LeanCommandResult> = {}): LeanCommandResult => ({
  status: 'completed',
  command_id: ID,
  session_id: 'default',
  output: '',
  exit_code: 0,
  state: 'exited',
  reason: 'exited',
  cwd: '/home/u',
  duration_ms: 9,
  ...fields,
});

const partial = (fields: Partial<LeanCommandResult> = {}): LeanCommandResult => ({
  status: 'partial',
  command_id: ID,
  session_id: 'default',
  output: '',
  state: 'running',
  reason: 'silence',
  duration_ms: 9_100,
  ...fields,
});

const cut = {
  bytes_total: 40_000,
  lines_total: 3001,
  truncated: true,
  omitted_lines: 2003,
  log_path: '/tmp/conch/c.log',
};

describe('the status line of a completed command', () => {
  test('is the exit code and the duration alone when nothing else changed', () => {
    expect(renderCommandResult(done())).toBe('[exit 0 · 9 ms]');
    expect(renderCommandResult(done({ exit_code: 2, duration_ms: 1234 }))).toBe('[exit 2 · 1.2 s]');
  });

  test('names the cwd only when the command changed it', () => {
    expect(renderCommandResult(done({ cwd: '/tmp', cwd_changed: true }))).toBe('[exit 0 · 9 ms · cwd /tmp]');
    expect(renderCommandResult(done({ cwd: '/tmp' }))).toBe('[exit 0 · 9 ms]');
  });

  test('comes first, before the output', () => {
    expect(renderCommandResult(done({ output: 'a\nb\n' }))).toBe('[exit 0 · 9 ms]\na\nb');
  });

  test('names another end than an exit, the signal, an unknown code and isolation', () => {
    expect(
      commandStatusLine(done({ state: 'killed', exit_code: null, signal: 'SIGTERM', duration_ms: 3000 })),
    ).toBe('[killed · exit unknown · SIGTERM · 3 s]');
    expect(commandStatusLine(done({ exit_code: 130, signal: 'SIGINT' }))).toBe('[exit 130 · SIGINT · 9 ms]');
    expect(commandStatusLine(done({ state: 'lost', exit_code: null }))).toBe('[lost · exit unknown · 9 ms]');
    expect(commandStatusLine(done({ isolated: true }))).toBe('[exit 0 · 9 ms · isolated]');
    expect(commandStatusLine(done({ isolated: true, held_by_person: true }))).toBe(
      '[exit 0 · 9 ms · isolated: a person holds the terminal]',
    );
    expect(commandStatusLine(partial({ isolated: true, held_by_person: true, pause_timeout: 9 }))).toBe(
      `[running 9.1 s, quiet for 9 s · isolated: a person holds the terminal · next: read_output command_id=${ID}]`,
    );
    const swallowed = renderCommandResult(
      done({ state: 'lost', exit_code: null, swallowed: true, duration_ms: 1400 }),
    );
    expect(swallowed.split('\n')).toEqual([
      '[lost · exit unknown · 1.4 s]',
      "not run: a program holding the terminal (a person's) read its text instead of the shell; run it again",
    ]);
  });

  test('carries the command id while paging is possible (output cut, or a page read), never the log path', () => {
    const text = renderCommandResult(
      done({ exit_code: 1, output_info: cut, output: 'head\n[… notice]\ntail' }),
    );
    expect(text).toBe(`[exit 1 · 9 ms · command_id=${ID}]\nhead\n[… notice]\ntail`);
    expect(text).not.toContain('/tmp/conch/c.log');
    const page = { from_line: 0, to_line: 1, total_lines: 9, remaining_lines: 7, dropped_lines: 0 };
    expect(commandStatusLine(done({ page }))).toBe(`[exit 0 · 9 ms · command_id=${ID}]`);
  });

  test('does not name a non-default session (the caller gave it)', () => {
    expect(commandStatusLine(done({ session_id: 's_abcdefgh' }))).toBe('[exit 0 · 9 ms]');
  });
});

describe('the status line of a partial result: what runs, and the one call to make next', () => {
  const next = `next: read_output command_id=${ID}`;

  test('silence, total_timeout, until, cancelled and background', () => {
    // The pause comes from the result (what applied), never from the renderer's idea of a default.
    expect(commandStatusLine(partial())).toBe(`[running 9.1 s · ${next}]`);
    expect(commandStatusLine(partial({ pause_timeout: 9 }))).toBe(`[running 9.1 s, quiet for 9 s · ${next}]`);
    expect(commandStatusLine(partial({ pause_timeout: 0 }))).toBe(`[running 9.1 s · ${next}]`);
    expect(commandStatusLine(partial({ reason: 'total_timeout', duration_ms: 20_050 }))).toBe(
      `[running 20 s, still printing · ${next}]`,
    );
    expect(commandStatusLine(partial({ reason: 'until_matched' }))).toBe(
      `[running 9.1 s, until matched · ${next}]`,
    );
    expect(commandStatusLine(partial({ reason: 'cancelled' }))).toBe(
      `[running 9.1 s, call cancelled · ${next}]`,
    );
    expect(commandStatusLine(partial({ reason: 'background', isolated: true, duration_ms: 300 }))).toBe(
      `[running in the background · ${next}]`,
    );
  });

  test('a prompt names what waits and the call that answers it', () => {
    const waiting = (kind: NonNullable<LeanCommandResult['prompt']>['kind']) =>
      commandStatusLine(
        partial({ reason: 'awaiting_input', state: 'awaiting_input', prompt: { kind, text: '?' } }),
      );
    const id = `command_id=${ID}`;
    expect(waiting('password')).toBe(`[waiting at a password prompt · next: respond ${id} secret=true]`);
    expect(waiting('yes_no')).toBe(`[waiting at a yes/no prompt · next: respond ${id} text="y" or "n"]`);
    expect(waiting('pager')).toBe(
      `[waiting in a pager · next: send_control ${id} key="q" (or "space" for more)]`,
    );
    expect(waiting('press_key')).toBe(`[waiting for a key press · next: send_control ${id} key="enter"]`);
    expect(waiting('screen')).toBe(`[a full-screen program is waiting for keys · next: send_control ${id}]`);
    expect(waiting('repl')).toBe(`[waiting at a REPL prompt · next: respond ${id}]`);
    expect(waiting('text')).toBe(`[waiting for input · next: respond ${id}]`);
  });

  test('a command waiting for input asks for the answer even when the call ended for another reason', () => {
    const prompt = { kind: 'yes_no' as const, text: 'Continue? [y/N] ' };
    expect(commandStatusLine(partial({ reason: 'silence', state: 'awaiting_input', prompt }))).toBe(
      `[waiting at a yes/no prompt · next: respond command_id=${ID} text="y" or "n"]`,
    );
  });

  test('is one line, then the output', () => {
    const text = renderCommandResult(
      partial({
        reason: 'awaiting_input',
        state: 'awaiting_input',
        prompt: { kind: 'password', text: 'Password: ' },
        output: 'Password: ',
      }),
    );
    expect(text).toBe(
      `[waiting at a password prompt · next: respond command_id=${ID} secret=true]\nPassword: `,
    );
  });
});

describe('notes around the output', () => {
  test('a recreated default session and an exited shell', () => {
    expect(renderCommandResult(done({ new_shell: true, output: 'x' }))).toBe(
      '[exit 0 · 9 ms]\nnew shell: cwd and environment were reset\nx',
    );
    expect(renderCommandResult(done({ session_ended: true }))).toBe(
      "[exit 0 · 9 ms]\nthe session's shell exited; the next command starts a new one",
    );
  });

  test('the screen view', () => {
    const screen = { rows: ['a'], cursor: { row: 0, col: 1 }, alt_screen: true, cols: 80, rows_count: 24 };
    expect(renderCommandResult(partial({ output: 'a', screen }))).toBe(
      `[running 9.1 s · next: read_output command_id=${ID}]\na\n[screen 80x24 · cursor row=0 col=1 · alt_screen=true]`,
    );
  });
});
