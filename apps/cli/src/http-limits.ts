/**
 * The resource limits of `conch mcp --http` and their defaults (docs/security.md), apart from the server so
 * that the CLI's flags can show them without loading it.
 */

import { MAX_REQUEST_LINE_BYTES } from '@conch/mcp/limits';

/** The resource limits of the HTTP face. */
export interface HttpLimits {
  /** An MCP session without a request for this long is closed (seconds). */
  idleTimeoutS: number;
  /** Most MCP sessions at once; beyond it the least recently used idle one is closed. */
  maxSessions: number;
  /** Largest request body, bytes (a body is one JSON-RPC message: the stdio line limit). */
  maxBodyBytes: number;
  /** Most connections at once; beyond it the oldest one not in a request is closed. */
  maxConnections: number;
  /** How long a connection may take to send its request headers (seconds). */
  headersTimeoutS: number;
  /** How long a connection may take to send a whole request, body included (seconds). */
  requestTimeoutS: number;
}

/** The defaults of {@link HttpLimits}. */
export const HTTP_DEFAULTS: Readonly<HttpLimits> = {
  idleTimeoutS: 30 * 60,
  maxSessions: 64,
  maxBodyBytes: MAX_REQUEST_LINE_BYTES,
  maxConnections: 256,
  headersTimeoutS: 10,
  requestTimeoutS: 60,
};
