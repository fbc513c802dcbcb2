/**
 * Which process facts this host uses, chosen once at start: `/proc` where it is readable (Linux), the
 * portable `ps` otherwise. `CONCH_PROCESS_FACTS` overrides it: `ps` forces the portable one (for tests, and
 * for systems whose `/proc` is not Linux's), `proc` insists on `/proc`, `auto` (or unset) chooses. Drivers
 * over a channel use the override for the far host too.
 */

import { ConchError, ErrorCode } from '@conch/core';
import type { ProcessFacts, ProcessFactsKind } from '@conch/core/host';
import { ProcProcessFacts, procAvailable } from './proc-facts.js';
import { PsProcessFacts } from './ps-facts.js';

/** The environment variable that overrides the choice. */
export const PROCESS_FACTS_ENV = 'CONCH_PROCESS_FACTS';

/** Its valid values. */
export const PROCESS_FACTS_CHOICES = ['auto', 'proc', 'ps'] as const;

/**
 * The kind `CONCH_PROCESS_FACTS` forces (`proc` or `ps`), or undefined for `auto`/unset. Throws an
 * INVALID_ARGUMENT error naming the value and the valid choices for anything else.
 */
export function processFactsOverride(env: NodeJS.ProcessEnv = process.env): ProcessFactsKind | undefined {
  const value = env[PROCESS_FACTS_ENV]?.trim();
  if (value === undefined || value === '' || value === 'auto') return undefined;
  if (value === 'proc' || value === 'ps') return value;
  throw new ConchError(
    ErrorCode.INVALID_ARGUMENT,
    `Invalid ${PROCESS_FACTS_ENV}=${JSON.stringify(value)}: valid values are ${PROCESS_FACTS_CHOICES.join(', ')}.`,
    { hint: `Unset ${PROCESS_FACTS_ENV} to let conch choose (/proc where present, else ps).` },
  );
}

/** The kind this host uses (see the module doc). */
export function chooseProcessFactsKind(env: NodeJS.ProcessEnv = process.env): ProcessFactsKind {
  const forced = processFactsOverride(env);
  if (forced === 'proc' && !procAvailable()) {
    throw new ConchError(
      ErrorCode.INVALID_ARGUMENT,
      `${PROCESS_FACTS_ENV}=proc, but this system has no readable /proc.`,
      { hint: `Use ${PROCESS_FACTS_ENV}=ps or unset it.` },
    );
  }
  return forced ?? (procAvailable() ? 'proc' : 'ps');
}

/** Creates the process facts of `kind`. */
export function createProcessFacts(kind: ProcessFactsKind): ProcProcessFacts | PsProcessFacts {
  return kind === 'proc' ? new ProcProcessFacts() : new PsProcessFacts();
}

let chosen: ProcProcessFacts | PsProcessFacts | undefined;

/** This host's process facts, chosen at the first call (see the module doc). */
export function processFacts(): ProcessFacts {
  chosen ??= createProcessFacts(chooseProcessFactsKind());
  return chosen;
}

/**
 * The start time (seconds since the epoch) of this process, the one synchronous fact (a server's identity
 * is needed before anything can wait): from `/proc` when chosen, else once from `ps`.
 */
export function ownStartTime(): number | undefined {
  const facts = processFacts();
  if (facts instanceof ProcProcessFacts) return facts.processNow(process.pid)?.startTime;
  return PsProcessFacts.ownStartTime();
}
