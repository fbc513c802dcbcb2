// The parent side of alt-worker.mjs: forks it (a clean process with no conch state in it) and asks it to
// run and time one alternative at a time. `run(kind, cmd)` resolves to the worker's reply
// `{ ms, bytes? }`; `timeMany(kind, cmd, n)` to the times of n runs made back to back in the worker;
// `close()` stops the worker and everything it started.

import { fork } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, killTree, withCap } from './lib.mjs';

/** Starts alt-worker.mjs with `cwd` as the working directory of what it runs. */
export function startAltWorker(cwd) {
  const worker = fork(join(BENCH_DIR, 'alt-worker.mjs'), [], {
    cwd,
    env: { ...process.env, BENCH_CWD: cwd },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map();
  let nextId = 1;
  worker.on('message', (m) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p?.reject(new Error(m.error));
    else p?.resolve(m);
  });
  worker.on('exit', () => {
    for (const p of pending.values()) p.reject(new Error('the worker exited'));
    pending.clear();
  });
  const run = (kind, cmd, capMs = 30_000, repeat = 1) =>
    withCap(
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.send({ id, kind, cmd, repeat });
      }),
      capMs,
      `${kind} ${cmd}`,
    );
  return {
    pid: worker.pid,
    run,
    /** The worker's own timing of one run, in ms. */
    time: async (kind, cmd) => (await run(kind, cmd)).ms,
    /** The worker's own timings of `n` runs made one right after another ("warm"), in ms. */
    timeMany: async (kind, cmd, n) => (await run(kind, cmd, 30_000, n)).samples ?? [],
    close: async () => {
      await withCap(run('close', ''), 5000, 'worker close').catch(() => undefined);
      if (worker.pid) killTree(worker.pid);
    },
  };
}
