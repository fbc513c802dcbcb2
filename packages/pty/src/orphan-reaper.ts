/**
 * Reaps what a dead conch server left behind: processes whose environment carries an owner tag
 * `conch-<pid>-…` of a server process that no longer runs. Called at start-up.
 */

import { listPids, readEnvVar, readStat } from './proc-fs.js';

/** Kills orphans of dead conch servers; returns how many processes it sent SIGKILL to. */
export async function reapOrphans(): Promise<number> {
  const victims: number[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    const tag = readEnvVar(pid, 'CONCH_OWNER');
    if (!tag) continue;
    const owner = /^conch-(\d+)-/.exec(tag);
    if (!owner) continue;
    const ownerPid = Number(owner[1]);
    if (ownerPid === process.pid) continue;
    const ownerStat = readStat(ownerPid);
    const ownerAlive =
      ownerStat !== undefined &&
      ownerStat.state !== 'Z' &&
      readEnvVar(ownerPid, 'CONCH_OWNER') === undefined &&
      isOwnerStillThere(ownerPid, tag);
    if (!ownerAlive) victims.push(pid);
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
 * The owner pid may have been reused by an unrelated process. Treat the owner as alive only when it is
 * a node process (the server), which is a cheap and conservative check.
 */
function isOwnerStillThere(pid: number, _tag: string): boolean {
  const stat = readStat(pid);
  return stat !== undefined && /node|conch/.test(stat.comm);
}
