/**
 * `@conch/core`: what a session and a command are and exactly how waiting works. Pure: no I/O, no
 * timers of its own (time comes from an injected Clock, bytes from an injected Driver).
 *
 * Every export here is public API, grouped by audience: those who embed the engine (a service, a face),
 * those who write a driver, and the rules and wire types both share. Adding an export is a decision about
 * public API. The engine's own parts (sessions, commands, the waiter, the output log, the shell protocol)
 * are in `@conch/core/engine`, for tools and tests that take the engine apart; the fake clock, the fake
 * driver and the driver conformance suite are in `@conch/core/testing`.
 */

// ---------------------------------------------------------------------------------------------------
// Embedding the engine

/** Time: the engine's injected clock, and the real one. */
export { type Clock, createRealClock, type TimerHandle } from './clock.js';
/** Diagnostics: the phases of a call, stamped for a tracer (benchmarks, `--trace-phases`). */
export {
  CALL_PHASES,
  type CallPhase,
  markPhase,
  type PhaseTracer,
  setPhaseTracer,
} from './diagnostics/phase-trace.js';
/** The source of randomness for ids and nonces (`SessionManagerOptions.random`). */
export type { RandomBytes } from './engine/ids.js';
/** The slim result shape faces give agents that want less. */
export { type LeanCommandResult, leanCommandResult } from './engine/lean-result.js';
/** What a person asks for when attaching to a session's terminal (`conch attach`). */
export type { AttachRequest } from './engine/policy-gate.js';
/** The policy and audit interfaces the engine consults (implemented by `@conch/policy`). */
export type {
  AuditEntry,
  AuditSink,
  CommandPolicy,
  PolicyCommandVerdict,
  PolicyDecision,
} from './engine/policy-hook.js';
/** The parameters of the engine's calls. */
export type {
  CreateLocalRequest,
  ExecuteRequest,
  KillProcessRequest,
  ListProcessesRequest,
  OpenSessionRequest,
  ReadOutputRequest,
  RespondRequest,
  SendControlRequest,
} from './engine/requests.js';
/** A session as `openSession` / `getSession` return it, and a live viewer of its terminal. */
export type { AgentCommandStart, Session, TerminalWatcher } from './engine/session.js';
/** The engine and what it is built from. */
export { DEFAULT_SESSION_ID, SessionManager, type SessionManagerOptions } from './engine/session-manager.js';
/** A person's live view of a session's terminal (`conch attach`). */
export type { TerminalAttachment } from './engine/terminal-attachment.js';
/** Notes a face shows with a result: a command held back by a person, a command line a program swallowed. */
export { HELD_BY_PERSON_NOTE, SWALLOWED_NOTE } from './engine/terminal-busy.js';
/** Following a terminal's alternate screen from its bytes (a face restoring a person's terminal). */
export { AltScreenWatch } from './output/alt-screen-watch.js';

// ---------------------------------------------------------------------------------------------------
// Writing a driver (docs/drivers.md)

/** The driver interface (versioned: `specificationVersion: 1`). */
export type {
  CommandKillOptions,
  Disposable,
  Driver,
  DriverKind,
  EscapedProcess,
  EscapedScan,
  ExitInfo,
  InputWaitEvidence,
  KillReport,
  OpenShellOptions,
  SandboxLaunch,
  ScreenFactory,
  ScreenRenderer,
  ScreenSnapshot,
  ShellKind,
  SpawnOptions,
  SpillSink,
  SpillStore,
  TerminalProcess,
  TreeKillOptions,
} from './driver.js';
/** The one input-wait decision from /proc facts, shared by every driver (see docs/waiting.md). */
export {
  decideInputWait,
  type InputWaitFacts,
  POLL_WAIT_CHANNEL,
  type ProcSample,
  READ_WAIT_CHANNELS,
  readSyscallNumber,
} from './input/input-wait.js';
/** Quoting for the POSIX shells conch drives. */
export { shellQuote } from './shell/shell-integration.js';
/** The plumbing every driver's terminal process shares (listeners, late exit, write deadlines). */
export {
  TerminalProcessBase,
  terminalExitedError,
  writeTimeoutError,
} from './terminal-process-base.js';

// ---------------------------------------------------------------------------------------------------
// Rules and wire types (docs/tools.md)

/** The engine's limits and defaults. */
export {
  DEFAULT_ENGINE_DEFAULTS,
  DEFAULT_LIMITS,
  type EngineDefaults,
  type EngineLimits,
  OUTPUT_LINES_RANGE,
  retentionTime,
} from './engine/limits.js';
/** The parameters' rules (range, default, unit, text): one definition each. */
export {
  CONTAINER_NETWORKS,
  type Configured,
  describeRule,
  KILL_SIGNALS,
  OUTPUT_VIEWS,
  PARAMETER_RULES,
  type ParameterContext,
  type ParameterRule,
  type ParameterType,
  parameterDefault,
  parameterRange,
  type RuledParameter,
} from './engine/parameters.js';
/** Errors: one class, one enum of string codes. */
export { ConchError, type ConchErrorOptions, ERROR_CODES, ErrorCode, toConchError } from './errors.js';
/** Face-neutral hints: references to operations that each face words with its vocabulary. */
export {
  type Hint,
  type HintPart,
  hint,
  NEUTRAL_VOCABULARY,
  VERBS,
  type Verb,
  type VerbRef,
  type Vocabulary,
  verb,
  wordHint,
} from './hint.js';
/** Sandboxed sessions: the rules, defined once, and the one judge of a failure they caused (docs/sandbox.md). */
export { sandboxFailureHint } from './sandbox/failure-hint.js';
export {
  checkSandboxNetwork,
  chooseSandbox,
  describeSandbox,
  describeSandboxNetwork,
  isWithin,
  normalizePath,
  resolveSandboxRules,
  SANDBOX_LIST_MAX,
  SANDBOX_NETWORK_WORDS,
  SANDBOX_SECRET_STORES,
  SANDBOX_SERVICE_SOCKETS,
  type SandboxHostFacts,
  type SandboxNetwork,
  type SandboxPolicy,
  type SandboxRequest,
  type SandboxRules,
  sandboxWidening,
} from './sandbox/rules.js';
/** The one list of shells, and of programs that run typed commands. */
export {
  COMMAND_READERS,
  isKnownShell,
  isShellName,
  programBaseName,
  runsTypedCommands,
  SHELL_PROGRAMS,
} from './shell/shell-programs.js';
/** The results and parameters on the wire. */
export type {
  AbortSignalLike,
  ByteRead,
  CallContext,
  CloseSessionResult,
  CommandResult,
  CommandState,
  KillResult,
  OutputInfo,
  PageInfo,
  ProcessInfo,
  PromptInfo,
  PromptKind,
  SessionInfo,
  SessionState,
  WaitOptions,
  WaitReason,
} from './types.js';
