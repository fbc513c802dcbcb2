/**
 * The daemon's own JSON-RPC methods besides `conch attach`'s (attach-protocol.ts): not tools, so MCP
 * clients never list them.
 *
 * - `conch/status` → `{pid, socket, started_at, version}`: the daemon answering on the socket says who it
 *   is (`conch daemon status` and `stop` ask it rather than trust a pid file that may be stale or gone).
 * - `notifications/conch/relay` (no params): the relay `conch mcp --daemon` sends it first on its
 *   connection; from then on the connection is an agent's door and a person's methods are refused on it.
 *   The relay never forwards a `conch/…` message of its MCP client, so the client cannot send it or undo it.
 */

/** Method names of the daemon's own methods. */
export const DAEMON_METHODS = {
  status: 'conch/status',
  relay: 'notifications/conch/relay',
} as const;

/** The prefixes of every daemon-only method and notification (what the relay never forwards). */
export const DAEMON_ONLY_PREFIXES = ['conch/', 'notifications/conch/'] as const;

/** True for a method name that only the daemon's own clients may send. */
export function isDaemonOnlyMethod(method: string): boolean {
  return DAEMON_ONLY_PREFIXES.some((prefix) => method.startsWith(prefix));
}

/** What `conch/status` answers. */
export interface DaemonIdentity {
  pid: number;
  socket: string;
  started_at: string;
  version: string;
}

/**
 * The daemon's identity in a `conch/status` answer (its four fields, nothing else), or undefined when
 * `value` is not one. A plain check rather than a schema: the client commands ask this on every start and
 * load no schema library (zod stays with the daemon, daemon-schemas.ts).
 */
export function daemonIdentityOf(value: unknown): DaemonIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, socket, started_at, version } = value as Record<string, unknown>;
  if (
    !Number.isInteger(pid) ||
    typeof socket !== 'string' ||
    typeof started_at !== 'string' ||
    typeof version !== 'string'
  )
    return undefined;
  return { pid: pid as number, socket, started_at, version };
}
