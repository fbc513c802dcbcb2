/**
 * The call context every verb of the service takes: what a face passes besides the parameters. It
 * carries no face: the MCP face fills it from the request (abort signal, progress notifications,
 * elicitation), the CLI from its terminal (ctrl+c, a spinner, a TTY prompt).
 */

import type { CallContext } from '@conch/core';

/** A yes/no question for the person at the face (e.g. whether to trust an unknown SSH host key). */
export interface ServiceQuestion {
  /** The question in full (several lines). */
  message: string;
  /** The thing to confirm, in one line (a checkbox title). */
  confirm: string;
  /** What yes and no do. */
  detail: string;
  /** How long the person has to answer; no answer in time is a no. */
  timeoutMs: number;
}

/**
 * What a face passes to each verb besides its parameters: the engine's call context (`signal`, which ends
 * the wait while a command keeps running and stops a connection attempt; `onProgress`, called at least
 * every 2 s while a command verb waits; `vocabulary`, the face's words for the verbs in the texts the
 * engine writes into results), plus a way to ask the person.
 */
export interface ServiceCallContext extends CallContext {
  /** Asks the person; resolves true only for an explicit yes. Absent when nobody can be asked. */
  ask?(question: ServiceQuestion): Promise<boolean>;
  /** Why nobody can be asked when `ask` is absent, in the face's words (ends a sentence). */
  cannotAsk?: string;
}
