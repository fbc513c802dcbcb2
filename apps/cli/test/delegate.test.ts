import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import {
  type FakeModel,
  type OpencodeTestEnv,
  opencodeTestEnv,
  processesUnder,
  startFakeModel,
  withoutOpencode,
} from '@conch/delegate/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type CliHome, createHome } from './harness.js';

let model: FakeModel;
let env: OpencodeTestEnv;
let home: CliHome;

beforeAll(async () => {
  model = await startFakeModel();
  env = opencodeTestEnv(model.baseURL);
  home = createHome();
  Object.assign(home.env, env.env);
});

afterAll(async () => {
  await home?.dispose();
  await model?.close();
  env?.cleanup();
});

test('conch delegate runs a task through OpenCode, continues it, and OpenCode stops with the daemon', async () => {
  const target = join(env.project, 'from-cli.txt');
  model.script.push({ tool: 'write', args: { filePath: target, content: 'via conch delegate\n' } });
  model.script.push({ text: 'Wrote from-cli.txt.' });
  const first = await home.conch(['delegate', '--dir', env.project, '--json', '--', 'Write from-cli.txt']);
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  const result = JSON.parse(first.stdout) as {
    status: string;
    session_id: string;
    files_changed: string[];
    steps: Array<{ tool?: string }>;
  };
  expect(result.status).toBe('success');
  expect(result.files_changed).toEqual([target]);
  expect(result.steps.map((s) => s.tool)).toEqual(['write']);
  expect(readFileSync(target, 'utf8')).toBe('via conch delegate\n');

  // Human output, continuing the same OpenCode session: the model sees the earlier turn.
  model.script.push({ text: 'Still here.' });
  const second = await home.conch([
    'delegate',
    '--dir',
    env.project,
    '--session',
    result.session_id,
    'Say you are still here',
  ]);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('Still here.');
  expect(second.stderr).toContain(`[success · session ${result.session_id}]`);
  expect(JSON.stringify(model.requests.at(-1))).toContain('Write from-cli.txt');

  expect(processesUnder(env.root).length).toBeGreaterThan(0);
  await home.conch(['daemon', 'stop']);
  await waitFor(() => processesUnder(env.root).length === 0, { what: 'OpenCode has stopped' });
}, 180_000);

test('conch delegate with an unknown agent is a usage-level conch error before anything runs', async () => {
  const before = model.requests.length;
  const r = await home.conch(['delegate', '--dir', env.project, '--agent', 'nosuch', 'Do nothing']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/nosuch/);
  expect(r.stderr).toMatch(/build/);
  expect(model.requests.length).toBe(before);
}, 120_000);

test('conch delegate without OpenCode says in one line how to install it', async () => {
  // A user without OpenCode: none on PATH, and conch installs none.
  const bare = createHome();
  Object.assign(bare.env, withoutOpencode());
  try {
    const before = model.requests.length;
    const r = await bare.conch(['delegate', '--dir', env.project, 'Do nothing']);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/OpenCode/);
    expect(lines[0]).toMatch(/npm install -g opencode-ai/);
    expect(lines[0]).toMatch(/conch daemon stop/);
    const json = await bare.conch(['delegate', '--json', '--dir', env.project, 'Do nothing']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.code).toBe('DELEGATE_UNAVAILABLE');
    expect(model.requests.length).toBe(before);
  } finally {
    await bare.dispose();
  }
}, 120_000);
