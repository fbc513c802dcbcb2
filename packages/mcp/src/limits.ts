/**
 * The MCP doors' size limits, in a module that loads nothing else: the CLI's client commands read them at
 * start-up without loading the MCP SDK.
 */

/** Longest accepted request line, in bytes (without its newline): 10 MiB. */
export const MAX_REQUEST_LINE_BYTES = 10 * 1024 * 1024;
