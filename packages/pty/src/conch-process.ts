/**
 * Whether a process runs inside a terminal conch manages: it, or one of its ancestors, carries the owner
 * tag every process started by a conch server inherits. A face uses it to tell a person at their own
 * terminal from an agent's command (e.g. `conch attach --take-over` under a policy).
 */

import { readProcStat } from '@conch/node';
import { OWNER_ENV } from './local-driver.js';
import { readEnvVar } from './proc-fs.js';

/** Most ancestors looked at (a guard against a cycle in a racing /proc read). */
const MAX_DEPTH = 256;

/**
 * True when `pid` or one of its ancestors was started by a conch server (its initial environment holds
 * the owner tag). False for a process outside conch's terminals; true too when `pid` does not exist (a
 * claim that cannot be checked is not trusted).
 */
export function runsUnderConch(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || readProcStat(pid) === undefined) return true;
  let current = pid;
  for (let depth = 0; depth < MAX_DEPTH && current > 1; depth++) {
    if (readEnvVar(current, OWNER_ENV) !== undefined) return true;
    const stat = readProcStat(current);
    if (stat === undefined) return false;
    current = stat.ppid;
  }
  return false;
}
