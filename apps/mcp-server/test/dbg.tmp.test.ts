import { test } from 'vitest';
import { startServer } from './harness.js';
test('dbg', async () => {
  const h = await startServer({ args: ['--log-level', 'debug'] });
  try {
    const r = await h.exec('for i in $(seq 1 100000); do echo "line $i"; sleep 0.05; done', { pause_timeout: 10, total_timeout: 2 });
    const t0 = Date.now();
    const k = await h.call('kill_process', { command_id: r.command_id });
    console.log(k.text, Date.now() - t0);
    console.log((await h.call('read_output', { command_id: r.command_id, pause_timeout: 0 })).text.slice(-300));
    console.log(JSON.stringify(await h.ok('list_sessions')));
    const c = await h.call('execute', {command: 'echo x'});
    console.log(c.text);
    console.log(JSON.stringify(await h.ok('list_sessions')));
  } finally { await h.close(); console.log(h.stderr()); }
});
