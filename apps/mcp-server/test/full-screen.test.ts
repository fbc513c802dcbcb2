import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { pidsWithEnv, processCmdline, processTree } from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';

/** Checks that `output` is a compact screen: no padded rows, no runs of empty rows, at most a screenful. */
function expectCompactScreen(output: string, rowsCount = 50): void {
  const rows = output.split('\n');
  expect(rows.length).toBeLessThanOrEqual(rowsCount);
  for (const row of rows) expect(row).toBe(row.trimEnd());
  expect(output).not.toMatch(/\n\n\n/);
  expect(output).not.toMatch(/^\s*\n/);
}

describe('full-screen programs through execute, screen reads, the hidden wrapper (built server)', () => {
  let h: ServerHandle;
  let dir: string;
  beforeAll(async () => {
    h = await startServer();
    dir = mkdtempSync(join(tmpdir(), 'conch-fullscreen-'));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('execute "vim x.txt" returns the compact screen, says so, and prompts with its status line', async () => {
    const file = join(dir, 'x.txt');
    const call = await h.call<CommandResult>('execute', { command: `vim -u NONE -N ${file}` });
    const r = call.structured;
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('awaiting_input');
    expect(r.output_view).toBe('screen');
    expect(r.prompt?.kind).toBe('screen');
    // Classified on the screen's content, trimmed: vim's status line, not 180 spaces and a ruler.
    expect(r.prompt?.text).toMatch(/x\.txt/);
    expect(r.prompt?.text).toBe(r.prompt?.text.trim());
    expect(r.prompt?.text).not.toMatch(/\s{2}/);
    expectCompactScreen(r.output);
    expect(r.output).toMatch(/^~$/m);
    expect(r.output).toContain('x.txt');
    expect(r.output.length).toBeLessThan(1000);
    expect(call.text).toContain('[output is the screen of a full-screen program]');
    await h.ok('send_control', { command_id: r.command_id, key: 'i' });
    const typed = await h.ok<CommandResult>('respond', {
      command_id: r.command_id,
      text: 'typed in vim',
      enter: false,
      until: 'typed in vim',
    });
    expect(typed.output_view).toBe('screen');
    expect(typed.output.split('\n')[0]).toBe('typed in vim');
    await h.ok('send_control', { command_id: r.command_id, key: 'esc' });
    const saved = await h.ok<CommandResult>('respond', { command_id: r.command_id, text: ':wq' });
    expect(saved.status).toBe('completed');
    expect(saved.exit_code).toBe(0);
    expect(saved.output_view).toBeUndefined();
    expect(readFileSync(file, 'utf8')).toBe('typed in vim\n');
  });

  test('less gives a readable compact screen and a pager prompt', async () => {
    const file = join(dir, 'rows.txt');
    writeFileSync(file, `${Array.from({ length: 300 }, (_, i) => `row ${i + 1}`).join('\n')}\n`);
    const r = await h.exec(`less ${file}`);
    expect(r.status).toBe('partial');
    expect(r.prompt?.kind).toBe('pager');
    expect(r.output_view).toBe('screen');
    expectCompactScreen(r.output);
    expect(r.output.split('\n')[0]).toBe('row 1');
    expect(r.output).toContain('row 40');
    const done = await h.ok<CommandResult>('send_control', { command_id: r.command_id, key: 'q' });
    expect(done.status).toBe('completed');
  });

  test('top -d 1 is awaiting_input (kind screen) on the first settle, and a screen read answers at once', async () => {
    const r = await h.exec('top -d 1');
    // Without the rule it streams redraws until total_timeout (20 s) with ~30K characters of text.
    expect(r.status).toBe('partial');
    expect(r.reason).toBe('awaiting_input');
    expect(r.state).toBe('awaiting_input');
    expect(r.prompt?.kind).toBe('screen');
    expect(r.output_view).toBe('screen');
    expectCompactScreen(r.output);
    expect(r.output).toMatch(/load average/);
    expect(r.output).toMatch(/PID/);
    // No pause_timeout/until: the screen as it is now, without waiting (a wait would end by
    // total_timeout or at the input wait, not by silence, while top redraws every second).
    const screen = await h.ok<CommandResult>('read_output', { command_id: r.command_id, view: 'screen' });
    expect(screen.reason).toBe('silence');
    expect(screen.screen?.rows.join('\n')).toMatch(/load average/);
    const done = await h.ok<CommandResult>('send_control', { command_id: r.command_id, key: 'q' });
    expect(done.status).toBe('completed');
    expect(done.exit_code).toBe(0);
  });

  test('after a screen read, the text view continues from that moment', async () => {
    const go = join(dir, 'go');
    const r = await h.exec(
      `echo first-part; while [ ! -e ${go} ]; do sleep 0.05; done; echo second-part; read x; echo third-part`,
      { until: 'first-part' },
    );
    expect(r.status).toBe('partial');
    expect(r.output).toContain('first-part');
    expect(r.output).not.toContain('second-part');
    writeFileSync(go, '');
    // A screen read that waits (until given) for the second part; it shows it on the screen.
    const screen = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      view: 'screen',
      until: 'second-part',
    });
    expect(screen.reason).toBe('until_matched');
    expect(screen.output).toContain('second-part');
    // The text view does not repeat what the screen read showed.
    const text = await h.ok<CommandResult>('read_output', { command_id: r.command_id, pause_timeout: 0 });
    expect(text.output).toBe('');
    const done = await h.ok<CommandResult>('respond', { command_id: r.command_id, text: 'go' });
    expect(done.status).toBe('completed');
    expect(done.output).not.toContain('second-part');
    expect(done.output).toContain('third-part');
  });

  test("the screen of a plain command never shows conch's typed wrapper", async () => {
    // A fresh session: its first command is typed right after the shell's first prompt.
    const { session_id } = await h.ok<{ session_id: string }>('create_local', {});
    for (const word of ['hello-screen', 'second-screen']) {
      const r = await h.exec(`echo ${word}; read x`, { session_id });
      expect(r.reason).toBe('awaiting_input');
      const screen = await h.ok<CommandResult>('read_output', { command_id: r.command_id, view: 'screen' });
      const shown = screen.screen!.rows.join('\n');
      expect(shown).toContain(word);
      expect(shown).not.toMatch(/__conch|eval \$'/);
      expect(screen.output).not.toMatch(/__conch|eval \$'/);
      const done = await h.ok<CommandResult>('respond', { command_id: r.command_id, text: '' });
      expect(done.status).toBe('completed');
    }
    await h.ok('close_session', { session_id });
  });

  test('while an isolated and a background command run, no command line shows the nonce or the wrapper', async () => {
    const nonce = (await h.exec('printf %s "$__conch_n"')).output.trim();
    expect(nonce).toMatch(/^[A-Za-z0-9]{8,64}$/);
    const bg = await h.exec('sleep 300; echo bg-$((1+1))', { background: true });
    expect(bg.reason).toBe('background');
    // The session is busy with `read y`: the next command runs isolated, and keeps running.
    const busy = await h.exec('read y', { pause_timeout: 0.5 });
    expect(busy.reason).toBe('awaiting_input');
    const isolated = await h.exec('sleep 300; echo iso-$((2+2))', { pause_timeout: 0.5 });
    expect(isolated.isolated).toBe(true);
    expect(isolated.status).toBe('partial');
    for (const id of [bg.command_id, isolated.command_id]) {
      // The command's shell and its sleep are there (so the scan below looks at them).
      await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', id).length >= 2, { what: `${id}'s processes` });
      const argvs = pidsWithEnv('CONCH_COMMAND_ID', id).map((pid) => (processCmdline(pid) ?? []).join(' '));
      expect(
        argvs.some((argv) => argv.includes('sleep 300')),
        argvs.join('\n'),
      ).toBe(true);
    }
    // Every process the server started: neither the nonce nor conch's wrapper in any argv.
    const tree = processTree(h.pid);
    expect(tree.length).toBeGreaterThanOrEqual(5);
    for (const pid of tree) {
      const argv = (processCmdline(pid) ?? []).join(' ');
      expect(argv, `pid ${pid}`).not.toContain(nonce);
      expect(argv, `pid ${pid}`).not.toMatch(/__conch|__CONCH|\]6973;/);
    }
    // The markers still work with the wrapper out of argv: both end with their exit status.
    const killed = await h.ok<{ result: string }>('kill_process', { command_id: bg.command_id });
    expect(killed.result).toBe('killed');
    await h.ok('send_control', { command_id: isolated.command_id, key: 'ctrl+c' });
    const done = await h.exec('(exit 7)');
    expect(done).toMatchObject({ status: 'completed', exit_code: 7, isolated: true });
    expect(done.session_ended).toBeUndefined();
    await h.ok('respond', { command_id: busy.command_id, text: '' });
    for (const id of [bg.command_id, isolated.command_id]) {
      await waitFor(() => pidsWithEnv('CONCH_COMMAND_ID', id).length === 0, { what: `${id} to be gone` });
    }
  });
});
