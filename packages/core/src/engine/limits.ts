import { DEFAULT_MAX_OUTPUT_LINES } from '../output/budget.js';
import type { SandboxRules } from '../sandbox/rules.js';

/** Resource limits of one engine (docs/sessions.md "Limits"); all configurable. */
export interface EngineLimits {
  maxSessions: number;
  maxLiveCommands: number;
  maxCols: number;
  maxRows: number;
  /** Bytes of input per call (command text, respond text). */
  maxInputBytes: number;
  /** Server cap on `max_output_chars`. */
  maxOutputChars: number;
  /** In-memory text ring per command, in characters. */
  ringChars: number;
  /** In-memory raw ring per command, in bytes. */
  rawRingBytes: number;
  /** Finished commands kept (newest first). */
  retainFinished: number;
  /** Finished commands are pruned this long after they ended. */
  retainMs: number;
  /** Longest timeout accepted, seconds. */
  maxTimeoutS: number;
  /** Most characters of one command's text in a listing (`list_processes`); longer ones are cut. */
  listedCommandChars: number;
  /**
   * Most characters of command text in one whole listing, shared by its rows, so that a listing stays far
   * below a transport's line limit (10 MiB) however many commands it holds.
   */
  listingChars: number;
}

/** The defaults of docs/output.md, docs/sessions.md. */
export const DEFAULT_LIMITS: EngineLimits = {
  maxSessions: 64,
  maxLiveCommands: 256,
  maxCols: 1000,
  maxRows: 1000,
  maxInputBytes: 1024 * 1024,
  maxOutputChars: 200_000,
  ringChars: 8 * 1024 * 1024,
  rawRingBytes: 1024 * 1024,
  retainFinished: 200,
  retainMs: 30 * 60 * 1000,
  maxTimeoutS: 3600,
  listedCommandChars: 2000,
  listingChars: 500_000,
};

/** Engine defaults for parameters a caller leaves out. */
export interface EngineDefaults {
  cols: number;
  rows: number;
  pauseTimeoutS: number;
  totalTimeoutS: number;
  maxOutputChars: number;
  /**
   * Most lines of output per call, on top of `maxOutputChars` (docs/output.md budget); within
   * {@link OUTPUT_LINES_RANGE}.
   */
  maxOutputLines: number;
  promptSettleMs: number;
  backgroundProbeMs: number;
  writeDeadlineMs: number;
  killGraceS: number;
  shellStartTimeoutMs: number;
  /**
   * Longest wait of an isolated command for the environment snapshot its session's shell writes after a
   * command's end (docs/sessions.md); past it the command starts with the file as it is.
   */
  snapshotWaitMs: number;
  progressMs: number;
  /** Shell for new local sessions; undefined = the user's login shell, else /bin/bash. */
  shell: string | undefined;
  /** Starting directory of new local sessions; undefined = the server's cwd. */
  cwd: string | undefined;
  /** Environment defaults of every session (docs/sessions.md), before the per-session id. */
  env: Record<string, string>;
  /** The OS sandbox of the default session (the server's `--sandbox`); undefined = none. */
  sandbox?: SandboxRules | undefined;
}

/** The defaults of docs/tools.md. */
export const DEFAULT_ENGINE_DEFAULTS: EngineDefaults = {
  cols: 200,
  rows: 50,
  pauseTimeoutS: 9,
  totalTimeoutS: 20,
  maxOutputChars: 30_000,
  maxOutputLines: DEFAULT_MAX_OUTPUT_LINES,
  promptSettleMs: 300,
  backgroundProbeMs: 300,
  writeDeadlineMs: 5000,
  killGraceS: 5,
  shellStartTimeoutMs: 15_000,
  snapshotWaitMs: 2000,
  progressMs: 1000,
  shell: undefined,
  cwd: undefined,
  env: { TERM: 'xterm-256color', PAGER: 'cat', GIT_PAGER: 'cat', MANPAGER: 'cat', CONCH: '1' },
};

/** Valid values of {@link EngineDefaults.maxOutputLines} (the server's `--max-output-lines`). */
export const OUTPUT_LINES_RANGE = { min: 10, max: 100_000 } as const;

/** How long finished commands are kept, in words ("30 min", "90 s"), from the configured `retainMs`. */
export function retentionTime(limits: Pick<EngineLimits, 'retainMs'>): string {
  const ms = limits.retainMs;
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
