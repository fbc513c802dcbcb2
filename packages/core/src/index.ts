/**
 * `@conch/core`: what a session and a command are and exactly how waiting works. Pure: no I/O, no
 * timers of its own (time comes from an injected Clock, bytes from an injected Driver).
 */

// Time
export { type Clock, createRealClock, type TimerHandle } from './clock.js';
// Diagnostics
export {
  CALL_PHASES,
  type CallPhase,
  markPhase,
  type PhaseTracer,
  setPhaseTracer,
} from './diagnostics/phase-trace.js';
// Driver interface (versioned)
export type {
  Disposable,
  Driver,
  ExitInfo,
  InputWaitEvidence,
  KillReport,
  MarkedProcess,
  MarkedScan,
  OpenShellOptions,
  ScreenFactory,
  ScreenRenderer,
  ScreenSnapshot,
  ShellKind,
  SpawnOptions,
  SpillSink,
  SpillStore,
  TerminalProcess,
} from './driver.js';
// Engine
export { Command, type CommandEnd, type CommandTerminal } from './engine/command.js';
/** What ended commands left running, scanned until it settles (one rule for every driver). */
export { ESCAPEE_SETTLE_MS, settledMarkedProcesses } from './engine/escapees.js';
export { cryptoRandomBytes, newCommandId, newSessionId, type RandomBytes } from './engine/ids.js';
export { type LeanCommandResult, leanCommandResult } from './engine/lean-result.js';
export {
  DEFAULT_ENGINE_DEFAULTS,
  DEFAULT_LIMITS,
  type EngineDefaults,
  type EngineLimits,
  OUTPUT_LINES_RANGE,
} from './engine/limits.js';
export {
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
  resolveParameter,
} from './engine/parameters.js';
export type { AttachRequest } from './engine/policy-gate.js';
export type {
  AuditEntry,
  AuditSink,
  CommandPolicy,
  PolicyCommandVerdict,
  PolicyDecision,
} from './engine/policy-hook.js';
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
export { SecretRedactor } from './engine/secret-redactor.js';
export {
  type AgentCommandStart,
  Session,
  type ShellTurn,
  signalFromStatus,
  type TerminalWatcher,
} from './engine/session.js';
export { DEFAULT_SESSION_ID, SessionManager, type SessionManagerOptions } from './engine/session-manager.js';
export type { TerminalAttachment } from './engine/terminal-attachment.js';
export {
  type BusyVerdict,
  HELD_BY_PERSON_NOTE,
  readsInput,
  SWALLOWED_NOTE,
  TerminalBusy,
  type TerminalLook,
} from './engine/terminal-busy.js';
export {
  compileUserPattern,
  type TextPattern,
  USER_PATTERN_MAX_CHARS,
  USER_PATTERN_SYNTAX,
} from './engine/user-pattern.js';
export { decideAwaiting, type WaitOutcome, type WaitSpec, waitForCommand } from './engine/waiter.js';
export { ConchError, type ConchErrorOptions, ERROR_CODES, ErrorCode, toConchError } from './errors.js';
// Errors (docs/tools.md)
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
/** The one input-wait decision from /proc facts, shared by every driver (see docs/waiting.md). */
export {
  decideInputWait,
  type InputWaitFacts,
  POLL_WAIT_CHANNEL,
  type ProcSample,
  parseInputWaitReport,
  READ_WAIT_CHANNELS,
  readSyscallNumber,
} from './input/input-wait.js';
// Keys and prompts
export {
  encodeKey,
  encodeKeys,
  isValidKey,
  KEY_NAMES,
  KeyMap,
  signalForKey,
  VALID_KEYS_DESCRIPTION,
} from './input/key-map.js';
export { EMPTY_LINE, type PersonLine, type SubmittedLine, typeKeys } from './input/person-line.js';
export {
  type ClassifiedPrompt,
  classifyPrompt,
  classifyPromptDetailed,
  isCertainPrompt,
  type PromptCertainty,
  PromptClassifier,
} from './input/prompt-classifier.js';
export { type TypedLines, typedLines } from './input/typed-line.js';
export { AltScreenWatch } from './output/alt-screen-watch.js';
export { budgetText, DEFAULT_MAX_OUTPUT_LINES, ERROR_LINE_PATTERN } from './output/budget.js';
export { compactScreen, screenPromptLine } from './output/compact-screen.js';
// Output (docs/output.md)
export { type OutputCursor, OutputLog, type OutputLogOptions } from './output/output-log.js';
export { renderTerminalText, TextRenderer, type TextRendererOptions } from './output/text-renderer.js';
export { MarkerParser, type ShellMarker, type StreamPiece } from './shell/marker-parser.js';
// Shell integration (docs/sessions.md)
export {
  ansiCQuote,
  type EncodedCommand,
  MARKER_OSC,
  MAX_TYPED_LINE,
  ShellIntegration,
  shellKindOf,
  shellQuote,
} from './shell/shell-integration.js';
export {
  COMMAND_READERS,
  isKnownShell,
  isShellName,
  programBaseName,
  runsTypedCommands,
  SHELL_PROGRAMS,
} from './shell/shell-programs.js';
/** The plumbing every driver's terminal process shares (listeners, late exit, write deadlines). */
export {
  TerminalProcessBase,
  terminalExitedError,
  writeTimeoutError,
} from './terminal-process-base.js';
// Wire types (docs/tools.md)
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
