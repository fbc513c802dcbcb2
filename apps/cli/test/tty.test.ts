import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, conchOnTty, createHome, endTtyTest, type TtyRun } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(() => endTtyTest(home));

/** The environment of the home, with or without NO_COLOR. */
function envWith(noColor: boolean): Record<string, string> {
  const env = { ...home.env } as Record<string, string>;
  if (noColor) env.NO_COLOR = '1';
  else delete env.NO_COLOR;
  return env;
}

/** Runs `conch ARGS` on a real pseudo-terminal (stdin, stdout and stderr a TTY). */
const onTty = (args: readonly string[], env: Record<string, string>): TtyRun => conchOnTty(args, env);

/** Runs `conch ARGS` with pipes (no TTY) in `env`. */
function onPipes(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const SGR = /\u001b\[[0-9;]*m/;
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .* [0-9]+\.[0-9]s/;

describe('human output on a terminal', () => {
  it('colours only on a TTY and never with NO_COLOR', async () => {
    const coloured = onTty(['exec', '--', 'exit 3'], envWith(false));
    await waitFor(() => coloured.exitCode !== undefined, { what: 'conch exits' });
    expect(coloured.exitCode).toBe(3);
    expect(coloured.text).toContain('exit 3');
    expect(coloured.text).toMatch(/\u001b\[31m\[exit 3\]/);

    const plain = onTty(['exec', '--', 'exit 3'], envWith(true));
    await waitFor(() => plain.exitCode !== undefined, { what: 'conch exits' });
    expect(plain.text).toContain('[exit 3]');
    expect(plain.text).not.toMatch(SGR);

    const piped = await onPipes(['exec', '--', 'exit 3'], envWith(false));
    expect(piped.code).toBe(3);
    expect(piped.out).toContain('[exit 3]');
    expect(piped.out).not.toMatch(SGR);
  });

  it('shows a spinner with the elapsed time while waiting, on a TTY only', async () => {
    const waiting = onTty(['exec', '--', 'echo started; sleep 2; echo finished'], envWith(true));
    await waitFor(() => waiting.exitCode !== undefined, { what: 'conch exits' });
    expect(waiting.exitCode).toBe(0);
    expect(waiting.text).toMatch(SPINNER);
    expect(waiting.text).toContain('finished');

    const piped = await onPipes(['exec', '--', 'echo started; sleep 2; echo finished'], envWith(true));
    expect(piped.out).toContain('finished');
    expect(piped.out).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });

  it('streams the output as it arrives on a TTY, and prints it whole through a pipe', async () => {
    const gate = join(home.dir, 'gate');
    const command = `echo first-$((1+1)); while [ ! -e ${gate} ]; do sleep 0.05; done; echo second-$((2+2)); exit 4`;
    const streaming = onTty(['exec', '--', command], envWith(true));
    // The first line shows while the command still runs (it waits for the gate the test opens).
    await waitFor(() => streaming.text.includes('first-2'), { what: 'the first line is streamed' });
    expect(streaming.exitCode).toBeUndefined();
    expect(streaming.text).not.toContain('second-4');
    writeFileSync(gate, '');
    await waitFor(() => streaming.exitCode !== undefined, { what: 'conch exits' });
    expect(streaming.exitCode).toBe(4);
    expect(streaming.text).toContain('second-4');
    // Each line once: the streamed output is not printed again at the end.
    expect(streaming.text.split('first-2').length).toBe(2);
    expect(streaming.text).toContain('[exit 4]');
    rmSync(gate);

    const piped = await onPipes(['exec', '--', `echo first-line; echo second-line; exit 4`], envWith(true));
    expect(piped.code).toBe(4);
    expect(piped.out).toContain('first-line\nsecond-line\n');
  });

  it('conch respond ID --secret reads the line from the terminal without echo', async () => {
    const asked = await home.conch([
      'exec',
      '--pause',
      '1',
      '--',
      'read -r -s -p "password: " P; echo; echo "got ${#P} chars"',
    ]);
    const id = /still running: (c_[a-z0-9]+)/.exec(asked.stderr)?.[1];
    expect(id).toBeDefined();

    const respond = onTty(['respond', id as string, '--secret'], envWith(true));
    await waitFor(() => respond.text.includes(`Input for ${id}:`), { what: 'the prompt' });
    respond.term.write('hunter2-secret\r');
    await waitFor(() => respond.exitCode !== undefined, { what: 'conch respond exits' });
    expect(respond.exitCode).toBe(0);
    expect(respond.text).toContain('got 14 chars');
    expect(respond.text, respond.text).not.toContain('hunter2');
  });
});
