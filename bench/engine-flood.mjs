// Child of memory.mjs: runs one command through conch's engine (no MCP) or through a naive
// child_process.exec that keeps all output, and prints a JSON line with its peak RSS (VmHWM).
// Usage: node engine-flood.mjs conch|exec '<command>' <timeout seconds>

import { exec } from 'node:child_process';
import { benchEngine, procStatusBytes } from './lib.mjs';

const [mode, command, timeoutArg] = process.argv.slice(2);
const timeoutS = Number(timeoutArg ?? 60);
const before = { rss: procStatusBytes('self', 'VmRSS'), hwm: procStatusBytes('self', 'VmHWM') };
const t0 = performance.now();
let result;
if (mode === 'conch') {
  const engine = await benchEngine({ prefix: 'conch-bench-engine-', defaults: { shell: '/bin/bash' } });
  const { cwd, manager } = engine;
  // A session of its own: closing a session kills processes by CONCH_SESSION_ID, and "default" is shared.
  const { session_id } = await manager.createLocal({ shell: '/bin/bash', cwd });
  await manager.execute({ command: 'echo hi', session_id });
  before.rss = procStatusBytes('self', 'VmRSS');
  before.hwm = procStatusBytes('self', 'VmHWM');
  const r = await manager.execute({ command, session_id, pause_timeout: timeoutS, total_timeout: timeoutS });
  result = {
    status: r.status,
    reason: r.reason,
    exit_code: r.exit_code,
    outputChars: r.output.length,
    bytes: r.output_info.bytes_total,
  };
  await engine.close();
  engine.remove();
} else if (mode === 'exec') {
  result = await new Promise((resolve) => {
    exec(
      command,
      { maxBuffer: Number.POSITIVE_INFINITY, timeout: timeoutS * 1000, encoding: 'utf8' },
      (error, stdout) => {
        resolve({
          status: error ? `error: ${error.message.slice(0, 80)}` : 'completed',
          outputChars: stdout.length,
        });
      },
    );
  });
} else {
  throw new Error(`unknown mode ${mode}`);
}
const ms = performance.now() - t0;
process.stdout.write(
  `${JSON.stringify({ mode, ms, before, hwm: procStatusBytes('self', 'VmHWM'), result })}\n`,
);
setTimeout(() => process.exit(0), 100).unref();
