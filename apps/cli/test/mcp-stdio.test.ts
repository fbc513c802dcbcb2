import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, createHome } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
});

describe('conch mcp (stdio) takes conch-mcp flags', () => {
  it('expands a leading ~ in --cwd to the home directory', async () => {
    const userHome = join(home.dir, 'user');
    mkdirSync(join(userHome, 'project'), { recursive: true });
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--cwd', '~/project', '--profile', 'default'],
        env: { ...(home.env as Record<string, string>), HOME: userHome },
        stderr: 'pipe',
      }),
    );
    try {
      const result = await client.callTool({ name: 'execute', arguments: { command: 'pwd' } });
      expect((result.structuredContent as { output: string }).output).toBe(join(userHome, 'project'));
    } finally {
      await client.close();
    }
  });

  it('names the flag and the value of a bad path, and exits 2', async () => {
    const r = await home.conch(['mcp', '--cwd', '/nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cwd: /nope: no such directory');
  });

  it('refuses server flags with --daemon (the daemon has its own settings)', async () => {
    const r = await home.conch(['mcp', '--daemon', '--cwd', '/tmp']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cwd cannot be combined with it');
  });
});
