/**
 * `@conch/core/engine`: the engine's own parts, for tools and tests that take the engine apart (a
 * benchmark of the waiter, a renderer of the output log). Embedding the engine or writing a driver needs
 * none of these: use `@conch/core`. These are public too, but they follow the engine's design, not a
 * promise: they change when the engine does.
 */

// ---------------------------------------------------------------------------------------------------
// Commands, sessions and the policy gate

export { Command, type CommandEnd, type CommandInit, type CommandTerminal } from './command.js';
export { ESCAPED_SETTLE_MS, settledEscapedProcesses } from './escaped-processes.js';
export { cryptoRandomBytes, newCommandId, newNonce, newSessionId } from './ids.js';
export { resolveParameter } from './parameters.js';
export { type AttachAccess, PolicyGate, SECRET_WITHHELD } from './policy-gate.js';
export { Session, type SessionInit, type ShellTurn, SIGNAL_NAMES, signalFromStatus } from './session.js';
export { type BusyVerdict, readsInput, TerminalBusy, type TerminalLook } from './terminal-busy.js';

// ---------------------------------------------------------------------------------------------------
// Waiting

export {
  compileUserPattern,
  type TextPattern,
  USER_PATTERN_MAX_CHARS,
  USER_PATTERN_SYNTAX,
} from './user-pattern.js';
export { decideAwaiting, endOnlyWait, type WaitOutcome, type WaitSpec, waitForCommand } from './waiter.js';

// ---------------------------------------------------------------------------------------------------
// Input: keys, typed lines, prompts, secrets

export {
  encodeKey,
  encodeKeys,
  isValidKey,
  KEY_NAMES,
  KeyMap,
  signalForKey,
  VALID_KEYS_DESCRIPTION,
} from '../input/key-map.js';
export { EMPTY_LINE, type PersonLine, type SubmittedLine, typeKeys } from '../input/person-line.js';
export {
  type ClassifiedPrompt,
  classifyPrompt,
  classifyPromptDetailed,
  isCertainPrompt,
  type PromptCertainty,
  PromptClassifier,
} from '../input/prompt-classifier.js';
export { type TypedLines, typedLines } from '../input/typed-line.js';
export { SecretRedactor } from './secret-redactor.js';

// ---------------------------------------------------------------------------------------------------
// Output: the log, its text and its screen

export { budgetText, DEFAULT_MAX_OUTPUT_LINES, ERROR_LINE_PATTERN } from '../output/budget.js';
export { compactScreen, screenPromptLine } from '../output/compact-screen.js';
export { type OutputCursor, OutputLog, type OutputLogOptions } from '../output/output-log.js';
export { renderTerminalText, TextRenderer, type TextRendererOptions } from '../output/text-renderer.js';

// ---------------------------------------------------------------------------------------------------
// The shell-integration protocol

export { MarkerParser, type ShellMarker, type StreamPiece } from '../shell/marker-parser.js';
export {
  ansiCQuote,
  type EncodedCommand,
  MARKER_OSC,
  MAX_TYPED_LINE,
  ShellIntegration,
  shellKindOf,
  snapshotFile,
} from '../shell/shell-integration.js';
