/**
 * The call context every verb of the service takes: what a face passes besides the parameters. It
 * carries no face: the MCP face fills it from the request (abort signal, progress notifications,
 * elicitation), the CLI from its terminal (ctrl+c, a spinner, a TTY prompt).
 */

import type { AbortSignalLike, CallContext, Vocabulary } from '@conch/core';

/** Progress while a call waits: the time spent and the newest output line. */
export interface ProgressInfo {
  elapsed_ms: number;
  message: string;
}

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

/** What a face passes to each verb besides its parameters. */
export interface ServiceCallContext {
  /** Aborting ends the call's wait (a command keeps running; a connection attempt stops). */
  signal?: AbortSignalLike;
  /** Called while the call waits (at least every 2 s for the command verbs). */
  progress?(info: ProgressInfo): void;
  /** Asks the person; resolves true only for an explicit yes. Absent when nobody can be asked. */
  ask?(question: ServiceQuestion): Promise<boolean>;
  /** Why nobody can be asked when `ask` is absent, in the face's words (ends a sentence). */
  cannotAsk?: string;
  /**
   * How the face names the operations, for the texts the engine writes into results (the omission
   * notice's paging operation). Default: the verbs themselves.
   */
  vocabulary?: Vocabulary;
}

/** The engine's call context (cancellation and progress) of a service call context. */
export function engineCall(context: ServiceCallContext): CallContext {
  const { signal, progress, vocabulary } = context;
  return {
    ...(signal ? { signal } : {}),
    ...(progress ? { onProgress: (info: ProgressInfo) => progress(info) } : {}),
    ...(vocabulary ? { vocabulary } : {}),
  };
}
