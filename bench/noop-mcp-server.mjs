// The MCP floor: a no-op MCP server on the same SDK as conch-mcp (a plain `McpServer` on the stdio
// transport), with one tool `execute {command}` that runs nothing and answers one line of text. Called by
// the same SDK client as conch-mcp in the same rounds (targets.mjs), it is what any tool call over MCP
// stdio costs before the tool does anything: two processes' wake-ups, the pipes, and the SDK's JSON-RPC
// and schema machinery on both sides.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'conch-bench-noop', version: '0.0.0' });
server.registerTool(
  'execute',
  { description: 'Runs nothing; answers one line.', inputSchema: { command: z.string() } },
  async () => ({ content: [{ type: 'text', text: '[exit 0 · 0 ms]' }] }),
);
await server.connect(new StdioServerTransport());
