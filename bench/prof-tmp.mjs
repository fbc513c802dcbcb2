import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const prof = process.argv[2] === 'prof';
const transport = new StdioClientTransport({ command: process.execPath, args: [...(prof ? ['--cpu-prof', '--cpu-prof-dir=/tmp/mcpprof'] : []), '../apps/mcp-server/dist/bin.js', ...process.argv.slice(3)], stderr: 'ignore' });
const client = new Client({ name: 'p', version: '1' });
await client.connect(transport);
await client.callTool({ name: 'execute', arguments: { command: 'true' } });
const times = [];
for (let i = 0; i < 300; i++) { const t = performance.now(); await client.callTool({ name: 'execute', arguments: { command: 'echo hi' } }); times.push(performance.now() - t); }
times.sort((a, b) => a - b); console.log('median', times[150].toFixed(2));
await client.close();
await new Promise((r) => setTimeout(r, 1500));
