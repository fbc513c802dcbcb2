/**
 * The method names of the daemon's live-terminal protocol (described in attach-protocol.ts), apart from its
 * schemas: the CLI's client side needs only the names, and loading the schemas (zod) would slow every start.
 */

/** Method names of the attach protocol. */
export const ATTACH_METHODS = {
  attach: 'conch/attach',
  input: 'conch/input',
  resize: 'conch/resize',
  detach: 'conch/detach',
  output: 'notifications/conch/output',
  closed: 'notifications/conch/closed',
  follow: 'conch/follow',
  unfollow: 'conch/unfollow',
  commandOutput: 'notifications/conch/command_output',
} as const;
