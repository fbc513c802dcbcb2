import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Delegator, processGroupAlive } from '../src/index.js';
import {
  type FakeModel,
  type OpencodeTestEnv,
  opencodeTestEnv,
  startFakeModel,
} from '../src/testing/index.js';

let model: FakeModel;
let env: OpencodeTestEnv;
let delegator: Delegator;

beforeAll(async () => {
  model = await startFakeModel();
  env = opencodeTestEnv(model.baseURL, { permission: { bash: 'ask' } });
  delegator = new Delegator({ env: env.env });
  await delegator.ensureServer();
}, 60_000);

afterAll(async () => {
  const pgid = delegator ? (await delegator.ensureServer()).pgid : undefined;
  await delegator?.close();
  if (pgid !== undefined) expect(await processGroupAlive(pgid)).toBe(false);
  await model?.close();
  env?.cleanup();
});

beforeEach(() => {
  model.requests.length = 0;
  model.script.length = 0;
});

describe('availability', () => {
  it('without an opencode binary: DELEGATE_UNAVAILABLE with an install hint', async () => {
    const missing = new Delegator({ bin: join(env.root, 'no-such-opencode') });
    await expect(missing.delegate({ task: 't', dir: env.project })).rejects.toMatchObject({
      code: 'DELEGATE_UNAVAILABLE',
      hint: expect.stringContaining('npm install -g opencode-ai'),
    });
    await missing.close();
  });

  it('one warm server is reused and its whole process group is stopped with it', async () => {
    const own = new Delegator({ env: env.env });
    const server = await own.ensureServer();
    expect(await own.ensureServer()).toBe(server);
    expect(server.pgid).toBeDefined();
    expect(await processGroupAlive(server.pgid as number)).toBe(true);
    await own.close();
    expect(await processGroupAlive(server.pgid as number)).toBe(false);
  }, 60_000);
});

describe('delegate', () => {
  it('writes a file through the write tool, reports the step and the file, and continues the session', async () => {
    const target = join(env.project, 'hello.txt');
    model.script.push({ tool: 'write', args: { filePath: target, content: 'hello from opencode\n' } });
    model.script.push({ text: 'I wrote hello.txt.' });
    const progress: string[] = [];
    const result = await delegator.delegate(
      { task: 'Create hello.txt saying hello', dir: env.project },
      { onProgress: (p) => progress.push(p.message) },
    );
    expect(result.status, JSON.stringify(result)).toBe('success');
    expect(readFileSync(target, 'utf8')).toBe('hello from opencode\n');
    expect(result.output).toBe('I wrote hello.txt.');
    expect(result.steps).toEqual([
      expect.objectContaining({ type: 'tool', tool: 'write', status: 'completed' }),
    ]);
    expect(result.files_changed).toEqual([target]);
    expect(result.session_id).toMatch(/^ses/);
    expect(result.tokens?.input).toBeGreaterThan(0);
    expect(progress.some((line) => line.startsWith('write'))).toBe(true);

    model.requests.length = 0;
    model.script.push({ text: 'Yes, it says hello.' });
    const again = await delegator.delegate({
      task: 'Does the file say hello?',
      dir: env.project,
      session_id: result.session_id,
    });
    expect(again.status).toBe('success');
    expect(again.session_id).toBe(result.session_id);
    expect(again.output).toBe('Yes, it says hello.');
    const seen = JSON.stringify(model.requests[0]?.messages);
    expect(seen).toContain('Create hello.txt saying hello');
    expect(seen).toContain('I wrote hello.txt.');
    expect(existsSync(target)).toBe(true);
  }, 60_000);
});

describe('agents', () => {
  it('runs explore and plan for real: their system prompt and read-only tool set reach the model', async () => {
    const build = await delegator.delegate({ task: 'Say hi', dir: env.project });
    expect(build.status).toBe('success');
    const buildRequest = model.requests.at(-1);
    expect(buildRequest?.tools).toContain('write');
    expect(JSON.stringify(buildRequest?.messages)).not.toContain('Plan Mode - System Reminder');

    model.requests.length = 0;
    const explored = await delegator.delegate({ task: 'Look around', dir: env.project, agent: 'explore' });
    expect(explored.status).toBe('success');
    expect(model.requests[0]?.system).toContain('You are a file search specialist');
    expect(model.requests[0]?.tools).not.toContain('write');
    expect(model.requests[0]?.tools).not.toContain('edit');

    // plan keeps the tool list but is told it is in plan mode, and its edits are really refused.
    model.requests.length = 0;
    const target = join(env.project, 'planned.txt');
    model.script.push({ tool: 'write', args: { filePath: target, content: 'no' } });
    const planned = await delegator.delegate({ task: 'Make a plan', dir: env.project, agent: 'plan' });
    expect(planned.status).toBe('success');
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('Plan Mode - System Reminder');
    expect(existsSync(target)).toBe(false);
    expect(planned.steps).toEqual([expect.objectContaining({ tool: 'write', status: 'error' })]);
  }, 60_000);

  it('refuses an unknown agent or model before anything runs', async () => {
    await expect(
      delegator.delegate({ task: 't', dir: env.project, agent: 'nope' as 'build' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      delegator.delegate({ task: 't', dir: env.project, model: 'fake/nope' }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('fake/m1'),
    });
    await expect(delegator.delegate({ task: 't', dir: env.project, model: 'nope/m1' })).rejects.toMatchObject(
      {
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('no provider "nope"'),
      },
    );
    await expect(delegator.delegate({ task: 't', dir: 'relative/dir' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(model.requests).toHaveLength(0);
  });
});

describe('permissions', () => {
  it('a write outside dir does not hang: it is denied and reported', async () => {
    const outside = join(env.root, 'outside.txt');
    model.script.push({ tool: 'write', args: { filePath: outside, content: 'no' } });
    model.script.push({ text: 'I could not write there.' });
    const result = await delegator.delegate({ task: 'Write outside', dir: env.project });
    expect(existsSync(outside)).toBe(false);
    expect(result.files_changed).toEqual([]);
    expect(result.steps).toEqual([expect.objectContaining({ tool: 'write', status: 'error' })]);
  }, 60_000);

  it('a permission request that still arrives is rejected and reported', async () => {
    model.script.push({
      tool: 'bash',
      args: { command: 'echo hi > asked.txt', description: 'Write a file' },
    });
    model.script.push({ text: 'bash was refused.' });
    const result = await delegator.delegate({ task: 'Run bash', dir: env.project });
    expect(existsSync(join(env.project, 'asked.txt'))).toBe(false);
    expect(result.steps).toContainEqual(
      expect.objectContaining({ type: 'permission', tool: 'bash', status: 'rejected' }),
    );
  }, 60_000);
});

describe('stopping', () => {
  it('cancellation aborts the model request', async () => {
    model.script.push({ hang: true });
    const controller = new AbortController();
    const progress: string[] = [];
    const running = delegator.delegate(
      { task: 'Hang', dir: env.project },
      { signal: controller.signal, onProgress: (p) => progress.push(p.message) },
    );
    await model.until(() => model.requests.length === 1);
    // While the model says nothing, a heartbeat keeps reporting progress.
    await waitFor(() => progress.some((line) => line.startsWith('working (')), { what: 'a heartbeat' });
    const closedBefore = model.closedEarly;
    controller.abort();
    const result = await running;
    expect(result.status).toBe('cancelled');
    await model.until(() => model.closedEarly > closedBefore);
  }, 60_000);

  it('a second task on a busy session gets DELEGATE_BUSY', async () => {
    const first = await delegator.delegate({ task: 'Start', dir: env.project });
    model.script.push({ hang: true });
    const controller = new AbortController();
    const running = delegator.delegate(
      { task: 'Hang', dir: env.project, session_id: first.session_id },
      { signal: controller.signal },
    );
    await model.until(() => model.requests.length === 2);
    await expect(
      delegator.delegate({ task: 'Again', dir: env.project, session_id: first.session_id }),
    ).rejects.toMatchObject({ code: 'DELEGATE_BUSY' });
    controller.abort();
    expect((await running).status).toBe('cancelled');
  }, 60_000);

  it('timeout_s expiry aborts the task with status timeout', async () => {
    model.script.push({ hang: true });
    const closedBefore = model.closedEarly;
    const result = await delegator.delegate({ task: 'Hang', dir: env.project, timeout_s: 1 });
    expect(result.status).toBe('timeout');
    expect(result.error).toContain('timeout_s');
    await model.until(() => model.closedEarly > closedBefore);
  }, 60_000);

  it('a model that keeps answering HTTP 500 is status error with the provider message', async () => {
    for (let i = 0; i < 5; i++) model.script.push({ status: 500, message: 'the fake provider exploded' });
    const result = await delegator.delegate({ task: 'Fail', dir: env.project });
    expect(result.status).toBe('error');
    expect(result.error).toContain('the fake provider exploded');
  }, 60_000);
});
