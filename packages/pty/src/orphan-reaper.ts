/**
 * Reaps what a dead conch server left behind: processes whose environment carries the owner tag of a
 * server instance that no longer runs, and that instance's private directories (environment snapshots,
 * spill logs). Liveness is decided per instance — its pid and its start time, both in the tag — so a live
 * server started inside another server's session (whose environment carries that server's tag) keeps its
 * processes, and a reused pid is never taken for the instance. Started at start-up; the directories go at
 * once, the processes once their environments have been read (the server does not wait for that).
 */

import { isInstanceAlive, removeDeadInstanceDirs } from '@conch/node';
import { ownerOfTag } from './local-driver.js';
import { listPids, readEnvVarAsync, readStat } from './proc-fs.js';

/** Environments read at once while reaping. */
const ENVIRON_BATCH = 32;

/**
 * Kills orphans of dead conch servers and removes their private directories under `tmpDir` (default: the
 * OS temp dir); returns how many processes it sent SIGKILL to.
 */
export async function reapOrphans(tmpDir?: string): Promise<number> {
  // Before the first await: a caller that does not wait still has the directories removed at once.
  removeDeadInstanceDirs(tmpDir);
  const victims: number[] = [];
  const pids = listPids().filter((pid) => pid !== process.pid);
  // The environments are read without blocking, a batch at a time: on a busy machine (hundreds of
  // processes) the scan must not hold up the server that runs it.
  const tags: Array<string | undefined> = [];
  for (let at = 0; at < pids.length; at += ENVIRON_BATCH) {
    const batch = pids.slice(at, at + ENVIRON_BATCH);
    tags.push(...(await Promise.all(batch.map((pid) => readEnvVarAsync(pid, 'CONCH_OWNER')))));
  }
  for (const [i, pid] of pids.entries()) {
    const tag = tags[i];
    if (!tag) continue;
    const instance = ownerOfTag(tag);
    if (instance) {
      if (!isInstanceAlive(instance)) victims.push(pid);
      continue;
    }
    // A tag of the older format `conch-<pid>-<random>`: its owner is alive while a node process has that pid.
    const legacy = /^conch-(\d+)-[a-z0-9]+$/.exec(tag);
    if (!legacy) continue;
    const ownerPid = Number(legacy[1]);
    if (ownerPid === process.pid) continue;
    if (!isOwnerStillThere(ownerPid)) victims.push(pid);
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

/**
 * An old-format tag names only a pid, which may have been reused: the owner counts as alive while that pid
 * is a live node (or conch) process, a cheap and conservative check.
 */
function isOwnerStillThere(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && /node|conch/.test(stat.comm);
}
