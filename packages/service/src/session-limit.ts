/**
 * The session limit, checked before a face's sequence does anything outside this process (connecting over
 * SSH, creating a container): a full engine refuses early, saying what was not done. The engine checks it
 * again when the session opens.
 */

import { ConchError, ErrorCode, hint, type SessionManager, verb } from '@conch/core';

/** Throws `LIMIT_REACHED` when `manager` holds its most sessions; `notDone` ends the message ("nothing was connected"). */
export function assertRoomForSession(manager: SessionManager, notDone: string, then: string): void {
  const open = manager.listSessions().length;
  const { maxSessions } = manager.limits;
  if (open < maxSessions) return;
  throw new ConchError(
    ErrorCode.LIMIT_REACHED,
    `Session limit reached: ${open} of ${maxSessions} sessions are open; ${notDone}.`,
    {
      hint: hint`Close a session with ${verb('closeSession')} (${verb('listSessions')} shows them), then ${then}.`,
    },
  );
}
