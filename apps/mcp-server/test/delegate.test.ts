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
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer } from './harness.js';

let model: FakeModel;
let env: OpencodeTestEnv;

beforeAll(async () => {
  model = await startFakeModel();
  env = opencodeTestEnv(model.baseURL);
});

afterAll(async () => {
  await model?.close();
  env?.cleanup();
});

describe('delegate_task in conch-mcp', () => {
  test('a task writes a file through OpenCode, and OpenCode stops with the server', async () => {
    const h = await startServer({ env: env.env as Record<string, string> });
    try {
      expect(h.tools.map((t) => t.name)).toContain('delegate_task');
      const target = join(env.project, 'from-conch.txt');
      model.script.push({ tool: 'write', args: { filePath: target, content: 'via conch-mcp\n' } });
      model.script.push({ text: 'Wrote from-conch.txt.' });
      const result = await h.call<{
        status: string;
        files_changed: string[];
        steps: Array<{ tool?: string }>;
      }>('delegate_task', { task: 'Write from-conch.txt', dir: env.project });
      expect(result.isError).toBeFalsy();
      expect(result.structured?.status).toBe('success');
      expect(result.structured?.files_changed).toEqual([target]);
      expect(result.structured?.steps.map((s) => s.tool)).toEqual(['write']);
      expect(readFileSync(target, 'utf8')).toBe('via conch-mcp\n');
      expect(processesUnder(env.root).length).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
    await waitFor(() => processesUnder(env.root).length === 0, {
      timeoutMs: 60_000,
      what: 'OpenCode processes to exit',
    });
  }, 120_000);

  test('not listed for a user without OpenCode: conch-mcp installs none of its own', async () => {
    const h = await startServer({ env: withoutOpencode() });
    try {
      expect(h.tools.map((t) => t.name)).not.toContain('delegate_task');
      expect(h.tools.map((t) => t.name)).toContain('execute');
    } finally {
      await h.close();
    }
  });

  test('not listed when no opencode binary can be found', async () => {
    const h = await startServer({ args: ['--opencode-bin', join(env.root, 'no-such-opencode')] });
    try {
      expect(h.tools.map((t) => t.name)).not.toContain('delegate_task');
    } finally {
      await h.close();
    }
  });
});
