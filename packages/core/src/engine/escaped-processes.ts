/**
 * What ended commands left running, as one settled look (docs/sessions.md). A single scan of a host's
 * processes is not a snapshot: it lists the pids first and reads each one's environment after, so a chain
 * of forks under way when the command ended — `setsid` forking a child and exiting, `sh -c 'daemon &'`
 * forking the daemon and exiting — can be missed (the parent exits after the pid list, its child was forked
 * after it) or caught half-way (the parent that is about to exit is listed too); and a job the session
 * shell has just forked carries no command id the host can see until it executes a program. So the host is
 * scanned again until two scans in a row find the same processes, none of them is running or in an
 * uninterruptible wait (a fork or an exec under way), and no fork of the terminal's own process is
 * running — for at most {@link ESCAPED_SETTLE_MS}. What a command left running is then listed every time,
 * and what merely passes through is not.
 */

import type { Clock } from '../clock.js';
import type { EscapedProcess, EscapedScan, TerminalProcess } from '../driver.js';
import type { ProcessInfo } from '../types.js';

/** The longest a listing waits for what commands left running to settle (a busy leftover never does). */
export const ESCAPED_SETTLE_MS = 1000;

/** The pause between two scans. */
export const ESCAPED_RESCAN_MS = 20;

/** Process states of a process in the middle of something: running (`R`) or in a disk wait (`D`, exec). */
const UNSETTLED_STATES: ReadonlySet<string> = new Set(['R', 'D']);

function samePids(
  a: ReadonlyMap<string, EscapedProcess[]>,
  b: ReadonlyMap<string, EscapedProcess[]>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [id, list] of a) {
    const other = b.get(id);
    if (!other || other.length !== list.length) return false;
    const pids = new Set(other.map((p) => p.pid));
    if (!list.every((p) => pids.has(p.pid))) return false;
  }
  return true;
}

/**
 * Scans with `scan` (a host's live processes carrying each command's id, and the terminal's forks) until the result settles
 * (see the module doc) or `settleMs` has passed, and returns the pids by command id, ascending.
 */
export async function settledEscapedProcesses(
  scan: () => Promise<EscapedScan>,
  clock: Clock,
  settleMs = ESCAPED_SETTLE_MS,
): Promise<Map<string, number[]>> {
  const deadline = clock.now() + settleMs;
  let previous: ReadonlyMap<string, EscapedProcess[]> | undefined;
  const busy = (list: readonly EscapedProcess[]) => list.some((p) => UNSETTLED_STATES.has(p.state));
  for (;;) {
    const { escaped: current, forks } = await scan();
    const steady =
      previous !== undefined &&
      samePids(previous, current) &&
      ![...current.values()].some(busy) &&
      !busy(forks);
    if (steady || clock.now() >= deadline) {
      const out = new Map<string, number[]>();
      for (const [id, list] of current)
        if (list.length > 0)
          out.set(
            id,
            list.map((p) => p.pid).sort((x, y) => x - y),
          );
      return out;
    }
    previous = current;
    await new Promise<void>((resolve) => clock.setTimeout(resolve, ESCAPED_RESCAN_MS));
  }
}

/**
 * Adds to each row of an ended command the live processes it left running, as `escaped_pids`: each
 * session's host (`procOf`, the session's terminal process) is scanned for the processes carrying an ended command's id
 * until the answer settles ({@link settledEscapedProcesses}); a host that cannot tell adds none.
 */
export async function addEscapedPids(
  processes: ProcessInfo[],
  procOf: (sessionId: string) => TerminalProcess | undefined,
  clock: Clock,
): Promise<void> {
  const ended = new Map<string, string[]>();
  for (const p of processes) {
    if (p.state === 'running' || p.state === 'awaiting_input') continue;
    const ids = ended.get(p.session_id);
    if (ids) ids.push(p.command_id);
    else ended.set(p.session_id, [p.command_id]);
  }
  const found = new Map<string, number[]>();
  await Promise.all(
    [...ended].map(async ([sessionId, ids]) => {
      const proc = procOf(sessionId);
      const scan = proc?.escapedProcesses?.bind(proc);
      if (!scan) return;
      try {
        for (const [id, pids] of await settledEscapedProcesses(() => scan(ids), clock)) found.set(id, pids);
      } catch {
        // The host could not tell (link lost, no helper channel): list the rows as they are.
      }
    }),
  );
  for (const p of processes) {
    const pids = found.get(p.command_id);
    if (pids && pids.length > 0) p.escaped_pids = pids;
  }
}
