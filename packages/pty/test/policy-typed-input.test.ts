/**
 * The policy also guards what is typed into a shell that an allowed command started (docs/policy.md): a person
 * could otherwise `execute bash` and then `respond rm …`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRealClock, SessionManager } from '@conch/core';
import { waitFor } from '@conch/core/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

let driver: LocalDriver;
let manager: SessionManager;
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-policy-pty-'));
  writeFileSync(join(work, 'victim'), 'precious');
  driver = createLocalDriver();
  manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    policy: new Policy(policyConfigFromFlags({ deny: ['rm'] })),
    defaults: { cwd: work },
  });
});

afterAll(async () => {
  await manager.shutdown();
  await driver.dispose();
  rmSync(work, { recursive: true, force: true });
});

it('denies rm through execute, and nothing runs', async () => {
  await expect(manager.execute({ command: 'true; rm victim' })).rejects.toMatchObject({
    code: 'POLICY_DENIED',
  });
  expect(existsSync(join(work, 'victim'))).toBe(true);
});

it('refuses rm typed into a bash started by an allowed command, even in pieces', async () => {
  const inner = await manager.execute({ command: 'bash --norc --noprofile -i', pause_timeout: 2 });
  expect(inner.status).toBe('partial');
  await expect(manager.respond({ command_id: inner.command_id, text: 'rm victim' })).rejects.toMatchObject({
    code: 'POLICY_DENIED',
  });
  await manager.respond({ command_id: inner.command_id, text: 'r', enter: false, pause_timeout: 0.2 });
  await expect(manager.respond({ command_id: inner.command_id, text: 'm victim' })).rejects.toMatchObject({
    code: 'POLICY_DENIED',
  });
  const ok = await manager.respond({
    command_id: inner.command_id,
    text: 'echo still-$((40+2))',
    pause_timeout: 1,
  });
  expect(ok.output).toContain('still-42');
  expect(existsSync(join(work, 'victim'))).toBe(true);
  const exit = await manager.respond({ command_id: inner.command_id, text: 'exit', pause_timeout: 5 });
  expect(exit.status).toBe('completed');
});

it('lets a non-shell program receive the same text (it is data there, not a command)', async () => {
  const r = await manager.execute({ command: `python3 -c 'print("got", input("> "))'` });
  const done = await manager.respond({ command_id: r.command_id, text: 'rm victim' });
  expect(done.output).toContain('got rm victim');
  expect(existsSync(join(work, 'victim'))).toBe(true);
});

it('names every process of the foreground group from /proc, also the terminal leader after exec', async () => {
  const proc = await driver.spawn({
    file: '/bin/bash',
    args: ['--norc', '--noprofile', '-c', 'exec -a notashell /bin/bash --norc --noprofile -i'],
    cwd: work,
    env: {},
    cols: 80,
    rows: 24,
  });
  try {
    // Wait for the condition: the shell waits for input on the terminal (kernel evidence).
    const reading = async () =>
      ['blocked_read', 'polling'].includes((await proc.inputWaitEvidence?.()) ?? '');
    await waitFor(reading, { what: 'the shell to read the terminal' }).catch(() => undefined);
    const names = (await proc.foregroundPrograms?.()) ?? [];
    expect(names).toContain('notashell');
    expect(names).toContain('bash');
    expect(await reading()).toBe(true);
  } finally {
    proc.dispose();
  }
});

it('refuses type-ahead and line-editing keys typed into a shell', async () => {
  const r = await manager.execute({ command: 'sleep 60; bash --norc', pause_timeout: 0.3 });
  await expect(manager.respond({ command_id: r.command_id, text: 'rm victim' })).rejects.toMatchObject({
    code: 'POLICY_DENIED',
    message: expect.stringContaining('type-ahead'),
  });
  await manager.killProcess({ command_id: r.command_id });
  const inner = await manager.execute({ command: 'bash --norc --noprofile -i', pause_timeout: 2 });
  await manager.respond({ command_id: inner.command_id, text: 'echo rm victim', pause_timeout: 0.5 });
  await expect(
    manager.sendControl({ command_id: inner.command_id, key: ['up', 'home', 'delete', 'enter'] }),
  ).rejects.toMatchObject({ code: 'POLICY_DENIED' });
  expect(existsSync(join(work, 'victim'))).toBe(true);
  await manager.respond({ command_id: inner.command_id, text: 'exit', pause_timeout: 5 });
});
