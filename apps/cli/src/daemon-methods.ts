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

import * as z from 'zod';

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

/** `conch/status` request. */
export const StatusRequestSchema = z.object({
  method: z.literal(DAEMON_METHODS.status),
  params: z.object({}).loose().optional(),
});
/** `conch/status` result. */
export const StatusResultSchema = z.object({
  pid: z.number().int(),
  socket: z.string(),
  started_at: z.string(),
  version: z.string(),
});
/** What `conch/status` answers. */
export type DaemonIdentity = z.infer<typeof StatusResultSchema>;
/** `notifications/conch/relay`. */
export const RelayNotificationSchema = z.object({
  method: z.literal(DAEMON_METHODS.relay),
  params: z.object({}).loose().optional(),
});
