import { ConchError, ErrorCode } from '@conch/core';

/** An `INVALID_ARGUMENT` error of `connectSsh`, with an optional hint. */
export function invalidArgument(message: string, hint?: string): ConchError {
  return new ConchError(ErrorCode.INVALID_ARGUMENT, message, hint === undefined ? {} : { hint });
}
