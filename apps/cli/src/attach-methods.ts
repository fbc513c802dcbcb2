/**
 * The method names of the daemon's live-terminal protocol (attach-protocol.ts documents each one), apart
 * from its schemas: the CLI's client and the web page's bundle need only the names, and loading the
 * schemas (zod) would slow every start.
 */

/** Method names of the attach protocol. */
export const ATTACH_METHODS = {
  attach: 'conch/attach',
  input: 'conch/input',
  resize: 'conch/resize',
  detach: 'conch/detach',
  output: 'notifications/conch/output',
  command: 'notifications/conch/command',
  closed: 'notifications/conch/closed',
  follow: 'conch/follow',
  unfollow: 'conch/unfollow',
  commandOutput: 'notifications/conch/command_output',
  dropped: 'notifications/conch/dropped',
} as const;
