/**
 * Reaps what a dead conch server left behind: processes whose environment carries the owner tag of a
 * server instance that no longer runs, and that instance's private directories (environment snapshots,
 * spill logs). Liveness is decided per instance — its pid and its start time, both in the tag — so a live
 * server started inside another server's session (whose environment carries that server's tag) keeps its
 * processes, and a reused pid is never taken for the instance. Started at start-up (the server does not
 * wait for it); every fact comes from the host's process facts (`/proc` or `ps`), the environments read a
 * batch at a time so that a busy machine's scan does not hold up the server's first calls.
 */

import { OWNER_MARKER } from '@conch/core/host';
import { isInstanceAlive, processFacts, removeDeadInstanceDirs } from '@conch/node';
import { ownerOfTag } from './local-driver.js';

/** Processes whose environments are read from /proc at once while reaping, between turns of the event loop. */
const ENVIRON_BATCH = 32;

/**
 * Kills orphans of dead conch servers and removes their private directories under `tmpDir` (default: the
 * OS temp dir); returns how many processes it sent SIGKILL to.
 */
export async function reapOrphans(tmpDir?: string): Promise<number> {
  await removeDeadInstanceDirs(tmpDir);
  const victims: number[] = [];
  const judged = new Map<string, boolean>();
  const facts = processFacts();
  const pids = (await facts.processes()).map((p) => p.pid).filter((pid) => pid !== process.pid);
  const tagged = new Map<number, Map<string, string>>();
  // /proc is read synchronously: a batch per turn of the event loop. `ps` runs apart from it: one call.
  const batch = facts.kind === 'proc' ? ENVIRON_BATCH : Math.max(1, pids.length);
  for (let at = 0; at < pids.length; at += batch) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const [pid, values] of await facts.markers([OWNER_MARKER], pids.slice(at, at + batch)))
      tagged.set(pid, values);
  }
  for (const [pid, values] of tagged) {
    if (pid === process.pid) continue;
    const tag = values.get(OWNER_MARKER);
    const instance = tag === undefined ? undefined : ownerOfTag(tag);
    if (tag === undefined || instance === undefined || instance.pid === process.pid) continue;
    let alive = judged.get(tag);
    if (alive === undefined) {
      alive = await isInstanceAlive(instance);
      judged.set(tag, alive);
    }
    if (!alive) victims.push(pid);
  }
  // SIGKILL acts asynchronously: count the signals delivered, not who happens to be gone a moment later.
  let killed = 0;
  for (const pid of victims) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}
