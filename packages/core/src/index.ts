/**
 * `@conch/core`: what a session and a command are and exactly how waiting works. Pure: no I/O, no
 * timers of its own (time comes from an injected Clock, bytes from an injected Driver).
 */

// Errors (SPEC §8)
export { ConchError, ErrorCode, ERROR_CODES, toConchError, type ConchErrorOptions } from './errors.js';
// Time
export { createRealClock, type Clock, type TimerHandle } from './clock.js';
// Driver interface (versioned)
export type {
  Disposable,
  Driver,
  ExitInfo,
  InputWaitEvidence,
  KillReport,
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
// Wire types (SPEC §2)
export type {
  AbortSignalLike,
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
// Output (SPEC §4)
export { OutputLog, type OutputCursor, type OutputLogOptions } from './output/output-log.js';
export { TextRenderer, renderTerminalText, type TextRendererOptions } from './output/text-renderer.js';
export { budgetText, ERROR_LINE_PATTERN } from './output/budget.js';
// Keys and prompts
export { KeyMap, KEY_NAMES, VALID_KEYS_DESCRIPTION, encodeKey, encodeKeys, isValidKey, signalForKey } from './input/key-map.js';
export {
  PromptClassifier,
  classifyPrompt,
  classifyPromptDetailed,
  isCertainPrompt,
  type ClassifiedPrompt,
  type PromptCertainty,
} from './input/prompt-classifier.js';
// Shell integration (SPEC §5)
export {
  ShellIntegration,
  MARKER_OSC,
  MAX_TYPED_LINE,
  ansiCQuote,
  shellKindOf,
  shellQuote,
  type EncodedCommand,
} from './shell/shell-integration.js';
export { MarkerParser, type ShellMarker, type StreamPiece } from './shell/marker-parser.js';
// Engine
export { Command, type CommandEnd, type CommandTerminal } from './engine/command.js';
export { Session, signalFromStatus } from './engine/session.js';
export {
  SessionManager,
  DEFAULT_SESSION_ID,
  KILL_SIGNALS,
  type CreateLocalRequest,
  type ExecuteRequest,
  type KillProcessRequest,
  type ListProcessesRequest,
  type OpenSessionRequest,
  type ReadOutputRequest,
  type RespondRequest,
  type SendControlRequest,
  type SessionManagerOptions,
} from './engine/session-manager.js';
export { waitForCommand, decideAwaiting, type WaitOutcome, type WaitSpec } from './engine/waiter.js';
export { DEFAULT_LIMITS, DEFAULT_ENGINE_DEFAULTS, type EngineDefaults, type EngineLimits } from './engine/limits.js';
export {
  SHELL_PROGRAMS,
  type AuditEntry,
  type AuditSink,
  type CommandPolicy,
  type PolicyCommandVerdict,
  type PolicyDecision,
} from './engine/policy-hook.js';
export { SecretRedactor } from './engine/secret-redactor.js';
export { cryptoRandomBytes, newCommandId, newSessionId, type RandomBytes } from './engine/ids.js';
