import { test } from 'vitest';
import { startServer } from './harness.js';
test('smoke', async () => {
  const h = await startServer({ args: ['--log-level', 'debug'] });
  try {
    console.log(JSON.stringify(h.tools.map(t => [t.name, Object.keys(t.outputSchema?.properties ?? {}).length, t.annotations])));
    console.log(JSON.stringify(h.tools.find(t => t.name === 'execute')?.inputSchema, null, 1).slice(0, 3000));
    const r = await h.call('execute', { command: 'echo hi' });
    console.log(JSON.stringify(r.raw, null, 1));
    const e = await h.call('execute', { command: 'echo hi', pause_timeout: 5000 });
    console.log(JSON.stringify(e.raw, null, 1));
  } finally {
    await h.close();
    console.log(h.stderr());
  }
});
