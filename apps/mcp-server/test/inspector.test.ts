/**
 * The MCP Inspector CLI (a third-party client) against the built server. The Inspector exits 0 even when a
 * tool returns an error, so the assertions are on its JSON output. Skipped only when the package cannot be
 * fetched from the registry.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathWithOpencode } from '@conch/delegate/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { assertBuilt, BIN } from './harness.js';

// The server finds OpenCode on PATH, as a user who delegates has it.
const bin = mkdtempSync(join(tmpdir(), 'conch-inspector-'));
const PATH = pathWithOpencode(bin);
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const NETWORK_FAILURE = /ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|E404|network|registry/i;

function inspector(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assertBuilt();
  return new Promise((resolve) => {
    const child = spawn(
      'npx',
      ['-y', '@modelcontextprotocol/inspector', '--cli', process.execPath, BIN, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PATH, npm_config_update_notifier: 'false' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', (error) => resolve({ code: -1, stdout, stderr: `${stderr}\n${String(error)}` }));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function parseJson(stdout: string): Record<string, unknown> {
  const start = stdout.indexOf('{');
  if (start < 0) throw new Error(`no JSON in inspector output: ${stdout.slice(0, 500)}`);
  return JSON.parse(stdout.slice(start)) as Record<string, unknown>;
}

describe('MCP Inspector CLI against the built server', () => {
  test('tools/list, then tools/call execute echo hi', async (ctx) => {
    const list = await inspector(['--method', 'tools/list']);
    if (list.code !== 0 && NETWORK_FAILURE.test(list.stderr)) {
      ctx.skip(
        `@modelcontextprotocol/inspector could not be fetched: ${list.stderr.split('\n').slice(-5).join(' ')}`,
      );
    }
    expect(list.code, list.stderr).toBe(0);
    const tools = (parseJson(list.stdout).tools as { name: string; outputSchema?: unknown }[]).map(
      (t) => t.name,
    );
    expect(tools).toContain('execute');
    expect(tools).toContain('connect_ssh');
    expect(tools).toContain('delegate_task'); // offered: an opencode binary is on PATH
    expect(tools).toHaveLength(12);

    const call = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'execute',
      '--tool-arg',
      'command=echo hi',
    ]);
    expect(call.code, call.stderr).toBe(0);
    const result = parseJson(call.stdout) as {
      isError?: boolean;
      content: { type: string; text: string }[];
      structuredContent: { status: string; exit_code: number; output: string };
    };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.status).toBe('completed');
    expect(result.structuredContent.exit_code).toBe(0);
    expect(result.structuredContent.output).toBe('hi');
    expect(result.content[0]?.text).toMatch(/^\[exit 0 · \d+ ms\]\nhi$/);

    const bad = await inspector([
      '--method',
      'tools/call',
      '--tool-name',
      'execute',
      '--tool-arg',
      'command=echo hi',
      '--tool-arg',
      'pause_timeout=5000',
    ]);
    const error = parseJson(bad.stdout) as {
      isError?: boolean;
      structuredContent: { error: { code: string } };
    };
    expect(error.isError).toBe(true);
    expect(error.structuredContent.error.code).toBe('INVALID_ARGUMENT');
  }, 300_000);
});
