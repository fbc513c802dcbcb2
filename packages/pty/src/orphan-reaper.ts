/**
 * Reaps what a dead conch server left behind: processes whose environment carries the owner tag of a
 * server instance that no longer runs, and that instance's private directories (environment snapshots,
 * spill logs). Liveness is decided per instance — its pid and its start time, both in the tag — so a live
 * server started inside another server's session (whose environment carries that server's tag) keeps its
 * processes, and a reused pid is never taken for the instance. Called at start-up.
 */

import { OWNER_MARKER } from '@conch/core/host';
import { isInstanceAlive, listPids, readProcStat, removeDeadInstanceDirs } from '@conch/node';
import { ownerOfTag } from './local-driver.js';
import { readEnvVar } from './proc-fs.js';

/**
 * Kills orphans of dead conch servers and removes their private directories under `tmpDir` (default: the
 * OS temp dir); returns how many processes it sent SIGKILL to.
 */
export async function reapOrphans(tmpDir?: string): Promise<number> {
  removeDeadInstanceDirs(tmpDir);
  const victims: number[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    const tag = readEnvVar(pid, OWNER_MARKER);
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
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z' && /node|conch/.test(stat.comm);
}
