import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BIN,
  type CliHome,
  conchOnTty,
  createHome,
  endTtyTest,
  startDaemonWithConfig as startDaemon,
  type TtyRun,
} from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(() => endTtyTest(home));

/** `conch attach ARGS` on a real pseudo-terminal. */
function attach(args: readonly string[], size = { cols: 100, rows: 30 }): TtyRun {
  return conchOnTty(['attach', ...args], home.env as Record<string, string>, size);
}

/** Starts the daemon in the foreground with a conch.config.json (a command policy), in the test's home. */
async function startDaemonWithConfig(config: object): Promise<void> {
  await startDaemon(home, config);
  const status = await home.conch(['daemon', 'status']);
  expect(status.code).toBe(0);
}

describe('conch attach under a real pseudo-terminal', () => {
  it('shows live output, forwards typed input and resizes, detaches on ctrl+], and the session keeps working', async () => {
    const before = await home.conch(['exec', '--', 'stty size']);
    expect(before.code).toBe(0);
    const originalSize = before.stdout.trim();

    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });
    expect(view.text).not.toContain('read-only');

    // The agent's command shows live in the person's terminal: its own text, then its output.
    const agent = await home.conch(['exec', '--', 'echo agent-$((40+2))']);
    expect(agent.code).toBe(0);
    expect(agent.stdout).toContain('agent-42');
    await waitFor(() => view.text.includes('agent-42'), { what: 'the agent output is shown' });
    expect(view.text).toContain('echo agent-$((40+2))');

    // The person types a command: it runs in the session.
    view.term.write('echo typed-$((6*7))\r');
    await waitFor(() => view.text.includes('typed-42'), { what: 'the typed command ran' });

    // The window size is forwarded: the session's terminal follows it.
    view.term.resize(90, 20);
    await waitFor(async () => (await home.conch(['exec', '--', 'stty size'])).stdout.trim() === '20 90', {
      what: 'the session to follow the window (stty size 20 90)',
    });

    // conch's completion markers and the line it types never show.
    expect(view.text).not.toContain('\u001b]6973;');
    expect(view.text).not.toContain('__conch');

    view.term.write('\u001d');
    await waitFor(() => view.exitCode !== undefined, { what: 'attach exited after ctrl+]' });
    expect(view.exitCode).toBe(0);
    expect(view.text).toContain('detached from default');

    // The agent's commands keep working afterwards, with their exit codes, at the original size.
    const after = await home.conch(['exec', '--', 'echo after-$((1+1)); stty size']);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('after-2');
    expect(after.stdout).toContain(originalSize);
    const failing = await home.conch(['exec', '--', 'sh -c "exit 3"']);
    expect(failing.code).toBe(3);
  });

  it('ends when the session closes, and refuses an unknown session with the valid ids', async () => {
    const created = await home.conch(['exec', '--', 'true']);
    expect(created.code).toBe(0);
    const unknown = attach(['nope']);
    await waitFor(() => unknown.exitCode !== undefined, { what: 'attach to an unknown session exits' });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.text).toContain('Invalid session_id: "nope"');

    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });
    expect((await home.conch(['close', 'default'])).code).toBe(0);
    await waitFor(() => view.exitCode !== undefined, { what: 'attach exits when the shell ends' });
    expect(view.exitCode).toBe(0);
    expect(view.text).toContain('the shell of default ended');
  });

  it('needs a terminal', async () => {
    const run = await home.conch(['attach', 'default']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('attach needs a terminal');
  });
});

describe('conch attach under a command policy', () => {
  it('is read-only unless --take-over; a take-over is audited; taking over from a conch terminal is refused', async () => {
    const audit = join(home.dir, 'audit.jsonl');
    await startDaemonWithConfig({ policy: { deny: ['rm'] }, audit_log: audit });
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);

    const watching = attach(['default']);
    await waitFor(() => watching.text.includes('read-only'), { what: 'attached read-only' });
    watching.term.write('echo typed-$((6*7))\r');
    await waitFor(() => watching.text.includes('keystrokes are not sent'), { what: 'the read-only notice' });
    // The keystrokes went nowhere: the agent's next command runs cleanly and is shown, the typed one never.
    const agent = await home.conch(['exec', '--', 'echo agent-$((40+2))']);
    expect(agent.stdout.trim()).toBe('agent-42');
    await waitFor(() => watching.text.includes('agent-42'), { what: 'the agent output is shown' });
    expect(watching.text).not.toContain('typed-42');
    watching.term.write('\u001d');
    await waitFor(() => watching.exitCode !== undefined, { what: 'detached' });

    const person = attach(['--take-over', 'default']);
    await waitFor(() => person.text.includes('attached to default'), { what: 'attached with input' });
    person.term.write('echo took-$((6*7))\r');
    await waitFor(() => person.text.includes('took-42'), { what: 'the typed command ran' });
    person.term.write('\u001d');
    await waitFor(() => person.exitCode !== undefined, { what: 'detached' });
    const records = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; decision: string; input: string });
    expect(records).toContainEqual(
      expect.objectContaining({ kind: 'attach', decision: 'allow', input: 'take over' }),
    );
    // The person's line is recorded as the person's, never as the agent's.
    expect(records).toContainEqual(
      expect.objectContaining({ kind: 'attach', by: 'person', input: 'echo took-$((6*7))' }),
    );
    expect(JSON.stringify(records.filter((r) => r.kind !== 'attach'))).not.toContain('took-');

    // An agent running `conch attach --take-over` in a conch terminal is refused.
    const inside = await home.conch([
      'exec',
      '--',
      `${process.execPath} ${BIN} attach --take-over default; echo "attach exited $?"`,
    ]);
    expect(inside.stdout).toContain('inside a terminal conch manages');
    expect(inside.stdout).toContain('attach exited 1');
  });
});
