import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliHome, connectDaemonMcp, createHome } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
});

function connect(): Promise<Client> {
  return connectDaemonMcp(home);
}

describe('conch mcp --daemon', () => {
  it('a restarted MCP client finds the background command of the previous one', async () => {
    const first = await connect();
    const started = await first.callTool({
      name: 'execute',
      arguments: { command: 'sleep 1; echo from-the-background', background: true },
    });
    const id = (started.structuredContent as { command_id: string }).command_id;
    expect(id).toMatch(/^c_/);
    await first.close();

    const second = await connect();
    const list = await second.callTool({ name: 'list_processes', arguments: {} });
    const ids = (list.structuredContent as { processes: { command_id: string }[] }).processes.map(
      (p) => p.command_id,
    );
    expect(ids).toContain(id);
    const read = await second.callTool({
      name: 'read_output',
      arguments: { command_id: id, until: 'from-the-background', pause_timeout: 20, total_timeout: 30 },
    });
    expect((read.structuredContent as { output: string }).output).toContain('from-the-background');
    await second.close();
  });
});
