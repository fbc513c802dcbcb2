/**
 * Phase marks of a call's round trip, for the benchmark (`bench/targets.mjs` prints where the time of
 * `execute true` goes). Off by default: marking is then one property check. A face turns it on by
 * installing a tracer (conch-mcp does when `CONCH_PHASE_TRACE` names a file); the tracer stamps the time,
 * so the core still never reads a clock itself.
 */

/** The phases of one tool call on the server, in the order they happen. */
export const CALL_PHASES = [
  /** The transport has the request's whole line. */
  'received',
  /** The tool's handler starts (the SDK has dispatched the request). */
  'handler',
  /** The engine hands the command's line to the terminal. */
  'typed',
  /** The engine has read the shell's end-of-command marker. */
  'shell_done',
  /** The result is checked and rendered as text. */
  'rendered',
  /** The reply's line is built; its write to stdout starts. */
  'replying',
] as const;

/** One of {@link CALL_PHASES}. */
export type CallPhase = (typeof CALL_PHASES)[number];

/** Receives each phase as it happens. */
export type PhaseTracer = (phase: CallPhase) => void;

const state: { tracer: PhaseTracer | undefined } = { tracer: undefined };

/** Installs (or, with `undefined`, removes) the process's phase tracer. */
export function setPhaseTracer(tracer: PhaseTracer | undefined): void {
  state.tracer = tracer;
}

/** Marks a phase of the current call; does nothing unless a tracer is installed. */
export function markPhase(phase: CallPhase): void {
  if (state.tracer !== undefined) state.tracer(phase);
}
