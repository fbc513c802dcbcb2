/**
 * One terminal, two hands: a person types into a session through the built `conch attach` (on a real
 * pseudo-terminal) while `conch exec` plays the agent in the same session. Whenever the person holds the
 * terminal (a program they started, or a line they have begun to type), the agent's command runs isolated and
 * says so; nothing of the agent's ever reaches the person's program or line, and no command is left waiting
 * for input it never got.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type CliHome,
  conchOnTty,
  createHome,
  endTtyTest,
  startDaemonWithConfig,
  type TtyRun,
} from './harness.js';
import { isolatedForPerson, programsOfHome, type Shared, sharedSession } from './share-helpers.js';

let home: CliHome;
let shared: Shared;
beforeEach(() => {
  home = createHome();
  shared = sharedSession(home);
});
afterEach(() => endTtyTest(home));

/** `conch attach ARGS` on a real pseudo-terminal. */
function attach(args: readonly string[]): TtyRun {
  return conchOnTty(['attach', ...args], home.env as Record<string, string>);
}

describe('a person and an agent in the same session (local)', () => {
  it("the person's `cat > file` gets only what the person typed; the agent's command runs isolated meanwhile", async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const notes = join(home.dir, 'notes.txt');
    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });

    view.term.write(`cat > ${notes}\r`);
    await waitFor(() => programsOfHome(home).includes('cat'), { what: 'cat runs in the session' });
    view.term.write('person line 1\r');
    await waitFor(() => view.text.includes('person line 1'), { what: 'the line is echoed' });

    const agent = await shared.exec('echo agent-$((40+2)); exit 7');
    expect(agent).toMatchObject(isolatedForPerson('agent-42', 7));
    // The view shows it as it starts: a dim one-line header (its output is in its own terminal).
    const header = '\u001b[2m[agent, isolated, you hold the terminal] echo agent-$((40+2)); exit 7\u001b[22m';
    await waitFor(() => view.text.includes(header), { what: 'the view shows the header' });
    expect(view.text).not.toContain('agent-42');
    const text = await home.conch(['exec', '--', 'echo agent-text']);
    expect(text.stdout.trim()).toBe('agent-text');
    expect(text.stderr).toContain('isolated: a person holds the terminal');

    view.term.write('person line 2\r\u0004');
    await waitFor(() => !programsOfHome(home).includes('cat'), { what: 'cat ended' });
    expect(readFileSync(notes, 'utf8')).toBe('person line 1\nperson line 2\n');
    await shared.expectNoneAwaitingInput();

    // The person's program ended: the agent's next command runs in the shell again (its cd stays), shown
    // dim at the prompt as its own text.
    const after = await shared.exec(`cd ${home.dir} && echo in-shell`);
    await waitFor(() => view.text.includes(`\u001b[2mcd ${home.dir} && echo in-shell\u001b[22m`), {
      what: 'the view shows the typed command dim',
    });
    expect(after).toMatchObject({ status: 'completed', exit_code: 0, output: 'in-shell' });
    expect(after.isolated).toBeUndefined();
    expect((await shared.exec('pwd')).output).toBe(home.dir);
    expect(view.text).not.toContain('__conch');
    expect(view.text).not.toContain('\u001b]6973;');
    await shared.expectNoneAwaitingInput();
  });

  it("the person's vim never gets the agent's text as keystrokes", async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const file = join(home.dir, 'edited.txt');
    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });

    view.term.write(`vim -u NONE -i NONE -N ${file}\r`);
    await waitFor(() => programsOfHome(home).includes('vim'), { what: 'vim runs in the session' });
    await waitFor(() => view.text.includes('\u001b[?1049h'), { what: 'vim draws its screen' });

    const agent = await shared.exec('echo agent-$((40+2))');
    expect(agent).toMatchObject(isolatedForPerson('agent-42'));
    const sessions = await shared.sessions();
    expect(sessions[0]).toMatchObject({ state: 'busy', attached: { viewers: 1, holds_terminal: true } });

    view.term.write('iperson text\u001b:wq\r');
    await waitFor(() => !programsOfHome(home).includes('vim'), { what: 'vim ended' });
    expect(readFileSync(file, 'utf8')).toBe('person text\n');
    // The agent's command was shown (after vim left its screen), as a dim line, never as conch's wrapper.
    await waitFor(() => view.text.includes('[agent, isolated, you hold the terminal] echo agent-$((40+2))'), {
      what: 'the view shows the agent command',
    });
    // Held back until vim left its screen.
    expect(view.text.lastIndexOf('[agent, isolated')).toBeGreaterThan(view.text.lastIndexOf('\u001b[?1049l'));
    expect(view.text).not.toContain('__conch');
    await shared.expectNoneAwaitingInput();

    const after = await shared.exec('echo back-in-shell');
    expect(after).toMatchObject({ status: 'completed', output: 'back-in-shell' });
    expect(after.isolated).toBeUndefined();
  });

  it("with a half-typed line the agent's command runs isolated and the person's line is unchanged", async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });
    expect((await shared.sessions())[0]).toMatchObject({
      state: 'idle',
      attached: { viewers: 1, holds_terminal: false },
    });

    view.term.write('echo half-');
    await waitFor(() => view.text.includes('echo half-'), { what: 'the half line is echoed' });
    const agent = await shared.exec('echo agent-$((40+2))');
    expect(agent).toMatchObject(isolatedForPerson('agent-42'));
    await shared.expectNoneAwaitingInput();

    view.term.write('typed\r');
    await waitFor(() => /(?<!echo )half-typed\r/.test(view.text), { what: 'the person line ran unchanged' });
    expect(view.text).not.toContain('__conch');
    // The line is done: the agent's next command runs in the shell again.
    const after = await shared.exec('echo back-in-shell');
    expect(after).toMatchObject({ status: 'completed', output: 'back-in-shell' });
    expect(after.isolated).toBeUndefined();
    await shared.expectNoneAwaitingInput();

    view.term.write('\u001d');
    await waitFor(() => view.exitCode !== undefined, { what: 'detached' });
    const listed = await home.conch(['sessions']);
    expect(listed.stdout).toMatch(/ATTACHED/);
    expect((await shared.sessions())[0]?.attached).toBeUndefined();
  });

  it('a person who leaves their program running when detaching still holds the terminal', async () => {
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });
    view.term.write('cat\r');
    await waitFor(() => programsOfHome(home).includes('cat'), { what: 'cat runs in the session' });
    view.term.write('\u001d');
    await waitFor(() => view.exitCode !== undefined, { what: 'detached' });

    const agent = await shared.exec('echo agent-$((40+2))');
    expect(agent).toMatchObject(isolatedForPerson('agent-42'));
    expect((await shared.sessions())[0]).toMatchObject({
      state: 'busy',
      attached: { viewers: 0, holds_terminal: true },
    });
    await shared.expectNoneAwaitingInput();

    const again = attach(['default']);
    await waitFor(() => again.text.includes('attached to default'), { what: 'attached again' });
    again.term.write('\u0003');
    await waitFor(() => !programsOfHome(home).includes('cat'), { what: 'cat ended' });
    await expect.poll(async () => (await shared.exec('echo in-shell')).isolated).toBeUndefined();
  });
});

describe('the audit log of a shared session', () => {
  it("records a line the person typed at the prompt as the person's, never a secret they typed into a program", async () => {
    const audit = join(home.dir, 'audit.jsonl');
    await startDaemonWithConfig(home, { audit_log: audit });
    expect((await home.conch(['exec', '--', 'true'])).code).toBe(0);
    const view = attach(['default']);
    await waitFor(() => view.text.includes('attached to default'), { what: 'attached' });

    view.term.write('echo person-$((6*7))\r');
    await waitFor(() => view.text.includes('person-42'), { what: 'the person line ran' });
    view.term.write('read -rs secret; echo "got ${#secret}"\r');
    await waitFor(() => view.text.includes('read -rs'), { what: 'read is typed' });
    // The shell itself reads (a builtin): the agent's command must not be typed into it.
    const agent = await shared.exec('echo agent-$((40+2))');
    expect(agent).toMatchObject(isolatedForPerson('agent-42'));
    view.term.write('hunter2-secret\r');
    await waitFor(() => view.text.includes('got 14'), { what: 'read took the secret' });

    const records = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({ kind: 'attach', by: 'person', input: 'echo person-$((6*7))' }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ kind: 'execute', input: 'echo agent-$((40+2))' }),
    );
    const agentRecords = records.filter((r) => r.kind !== 'attach');
    expect(JSON.stringify(agentRecords)).not.toContain('person-');
    expect(JSON.stringify(records)).not.toContain('hunter2');
  });
});
