import { mcpExchange } from '../scripts/mcp-exchange.mjs';
const env = { ...process.env, HOME: '/tmp/prof/home', CONCH_HOME: '/tmp/prof/ch2' };
const bins = ['/work/main/apps/mcp-server/zz-new/bin.js', '/work/main/apps/mcp-server/zz-old/bin.js'];
const res = bins.map(() => []); const ini = bins.map(() => []);
for (let i = 0; i < 30; i++) for (const [k, b] of bins.entries()) {
  const { times } = await mcpExchange({ command: process.execPath, args: [b], env, requests: [{ method: 'tools/call', params: { name: 'execute', arguments: { command: 'true' } } }] });
  res[k].push(times[1]); ini[k].push(times[0]);
}
for (const [k, b] of bins.entries()) { const a = res[k].sort((x, y) => x - y); const c = ini[k].sort((x, y) => x - y); console.log(b.split('/').at(-2), 'first result median', a[15].toFixed(1), 'p25', a[7].toFixed(1), 'min', a[0].toFixed(1), '| initialize median', c[15].toFixed(1)); }
