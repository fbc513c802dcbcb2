/**
 * The environment variables conch puts into every process it starts, so that a host's process table can
 * tell them apart (docs/drivers.md): a command's id, its session's id and the owning server instance.
 * A process keeps its initial environment when it forks, double-forks or calls `setsid`, so these find
 * what escaped a process group.
 */

/** Carried by a command's processes: `CONCH_COMMAND_ID=<command id>`. */
export const COMMAND_MARKER = 'CONCH_COMMAND_ID';

/** Carried by every process of a session: `CONCH_SESSION_ID=<session id>`. */
export const SESSION_MARKER = 'CONCH_SESSION_ID';

/** Carried by every process a local server started: `CONCH_OWNER=<owner tag>` (orphan reaping). */
export const OWNER_MARKER = 'CONCH_OWNER';

/** The `NAME=value` environment entry of a marker. */
export function markerEntry(name: string, value: string): string {
  return `${name}=${value}`;
}
