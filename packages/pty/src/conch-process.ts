/**
 * Whether a process runs inside a terminal conch manages: it, or one of its ancestors, carries the owner
 * tag every process started by a conch server inherits. A face uses it to tell a person at their own
 * terminal from an agent's command (e.g. `conch attach --take-over` under a policy).
 */

import { processFacts } from '@conch/node';
import { OWNER_ENV } from './local-driver.js';

/** Most ancestors looked at (a guard against a cycle in a racing read of the process table). */
const MAX_DEPTH = 256;

/**
 * True when `pid` or one of its ancestors was started by a conch server (its initial environment holds
 * the owner tag). False for a process outside conch's terminals; true too when `pid` does not exist (a
 * claim that cannot be checked is not trusted).
 */
export async function runsUnderConch(pid: number): Promise<boolean> {
  const facts = processFacts();
  if (!Number.isInteger(pid) || pid <= 0 || (await facts.process(pid)) === undefined) return true;
  const table = new Map((await facts.processes()).map((p) => [p.pid, p]));
  const chain: number[] = [];
  for (let current = pid; chain.length < MAX_DEPTH && current > 1 && table.has(current); ) {
    chain.push(current);
    current = table.get(current)!.ppid;
  }
  const markers = await facts.markers([OWNER_ENV], chain);
  return chain.some((p) => markers.get(p)?.has(OWNER_ENV) === true);
}
