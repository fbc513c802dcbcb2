import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from '@conch/core/testing';
import { pidsWithEnv } from '@conch/node/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { OWNER_ENV, runsUnderConch } from '../src/index.js';

const started: ChildProcess[] = [];
const markers: string[] = [];
afterEach(async () => {
  for (const marker of markers.splice(0)) {
    for (const pid of pidsWithEnv('MARK', marker)) process.kill(pid, 'SIGKILL');
    await waitFor(() => pidsWithEnv('MARK', marker).length === 0, { what: 'the probe is gone' });
  }
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }
  }
});

describe('runsUnderConch', () => {
  it('is false for a process outside conch, true for one carrying the owner tag and for its descendants', async () => {
    expect(await runsUnderConch(process.pid)).toBe(false);
    const marker = `probe-${process.pid}-${Date.now()}`;
    markers.push(marker);
    // A "conch terminal": a shell with the owner tag, whose child drops the tag from its own environment.
    const shell = spawn('/bin/sh', ['-c', `env -u ${OWNER_ENV} MARK=${marker} sleep 60; exit 0`], {
      env: { ...process.env, [OWNER_ENV]: `conch-1-test` },
      stdio: 'ignore',
    });
    started.push(shell);
    const child = await waitFor(() => pidsWithEnv('MARK', marker)[0], { what: 'the untagged child' });
    expect(await runsUnderConch(shell.pid!)).toBe(true);
    expect(await runsUnderConch(child)).toBe(true);

    const outside = spawn('/bin/sh', ['-c', 'sleep 60'], {
      stdio: 'ignore',
      env: { PATH: process.env.PATH },
    });
    started.push(outside);
    expect(await runsUnderConch(outside.pid!)).toBe(false);
  });

  it('does not trust a pid it cannot check', async () => {
    expect(await runsUnderConch(0)).toBe(true);
    expect(await runsUnderConch(-5)).toBe(true);
    expect(await runsUnderConch(2 ** 31 - 2)).toBe(true);
  });
});
