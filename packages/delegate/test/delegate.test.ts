import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Delegator } from '../src/index.js';
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
  env = opencodeTestEnv(model.baseURL);
  delegator = new Delegator({ env: env.env });
  await delegator.ensureServer();
}, 60_000);

afterAll(async () => {
  await delegator?.close();
  await model?.close();
  env?.cleanup();
});

beforeEach(() => {
  model.requests.length = 0;
  model.script.length = 0;
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
