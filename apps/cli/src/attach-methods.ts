/**
 * The method names of the daemon's live-terminal protocol (attach-protocol.ts documents each one), apart
 * from its schemas so that the web page's bundle can name them without loading zod.
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
