/**
 * A person's live view of a session's terminal (`conch attach`): what they see, whether their keystrokes
 * reach the terminal (the policy gate decides), their window size, and the end of the view.
 */

import type { ScreenSnapshot } from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { hint, verb } from '../hint.js';
import type { EngineLimits } from './limits.js';
import type { AttachRequest, PolicyGate } from './policy-gate.js';
import type { Session, TerminalWatcher } from './session.js';

/** A person's live view of a session's terminal (see {@link attachTerminal}). */
export interface TerminalAttachment {
  /**
   * Whether keystrokes are forwarded: always without a policy; under a policy only when the person asked
   * to take over (and not from inside a conch terminal). A read-only view refuses {@link write}.
   */
  readonly input: boolean;
  /** Why the view is read-only (undefined when input is forwarded). */
  readonly readOnlyReason: string | undefined;
  /** Types raw bytes into the terminal, as keystrokes. Rejects with `POLICY_DENIED` on a read-only view. */
  write(data: string | Uint8Array): Promise<void>;
  /** Resizes the terminal to the person's window (clamped to the engine's limits). */
  resize(cols: number, rows: number): void;
  /** The terminal's current screen (undefined without a screen renderer). */
  screen(): Promise<ScreenSnapshot | undefined>;
  /** Stops the view and restores the terminal's previous size. Idempotent. */
  detach(): void;
}

/**
 * Attaches `viewer` to `session`'s terminal: `viewer.onOutput` gets every byte the terminal prints from now
 * on, as the person would see it (conch's markers removed, the line conch types to run an agent's command
 * shown as the command's own text, secrets masked); `viewer.onClose` fires when the shell ends. The handle
 * types raw keystrokes (when `gate` allows; the person's submitted lines are audited as theirs), resizes
 * the terminal within `limits` (restored on `detach`) and gives the current screen to start the view with.
 */
export function attachTerminal(
  session: Session,
  viewer: TerminalWatcher,
  request: AttachRequest,
  gate: PolicyGate,
  limits: Pick<EngineLimits, 'maxCols' | 'maxRows'>,
): TerminalAttachment {
  if (!session.proc) {
    throw new ConchError(ErrorCode.SESSION_CLOSED, `Session ${session.id} is closed.`, {
      hint: hint`${verb('listSessions')} shows the open sessions.`,
    });
  }
  const { input, readOnlyReason } = gate.attachAccess(session.id, request);
  const original = { cols: session.cols, rows: session.rows };
  let resized = false;
  let attached = true;
  const watching = session.watch(viewer, { input });
  return {
    input,
    readOnlyReason,
    write: async (data) => {
      if (!attached)
        return Promise.reject(new ConchError(ErrorCode.INVALID_ARGUMENT, 'This view is detached.'));
      if (!input) {
        return Promise.reject(
          new ConchError(
            ErrorCode.POLICY_DENIED,
            `Denied by policy: this view is read-only (${readOnlyReason}).`,
            {
              hint: 'Nothing was typed.',
            },
          ),
        );
      }
      const line = await session.personWrite(
        typeof data === 'string' ? new TextEncoder().encode(data) : data,
      );
      if (line) gate.recordPersonLine(session.id, line);
    },
    resize: (cols, rows) => {
      if (!attached || !session.proc) return;
      const c = Math.min(Math.max(Math.floor(cols), 1), limits.maxCols);
      const r = Math.min(Math.max(Math.floor(rows), 1), limits.maxRows);
      if (!Number.isFinite(c) || !Number.isFinite(r)) return;
      resized = true;
      session.resize(c, r);
    },
    screen: () => session.screenSnapshot(),
    detach: () => {
      if (!attached) return;
      attached = false;
      watching.dispose();
      if (resized && session.proc) session.resize(original.cols, original.rows);
    },
  };
}
