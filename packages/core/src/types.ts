/**
 * The result and option shapes of docs/tools.md. Field names are snake_case because they are the wire contract.
 */

import type { DriverKind } from './driver.js';
import type { Vocabulary } from './hint.js';
import type { SandboxRules } from './sandbox/rules.js';

/** Lifecycle state of a session. */
export type SessionState = 'idle' | 'busy' | 'closed' | 'lost';

/** A session as reported by `list_sessions` and friends. */
export interface SessionInfo {
  session_id: string;
  kind: DriverKind;
  name: string;
  state: SessionState;
  cwd: string | null;
  shell: string;
  host?: string;
  port?: number;
  username?: string;
  /** The rules of the OS sandbox the session runs in (docs/sandbox.md); absent when it runs unsandboxed. */
  sandbox?: SandboxRules;
  pid?: number;
  created_at: string;
  last_activity_at: string;
  foreground_command_id?: string;
  command_ids: string[];
  /**
   * People sharing the terminal through `conch attach`: how many watch, and whether a person holds the
   * terminal now (a program they started, or a line they began to type). Absent when neither.
   */
  attached?: { viewers: number; holds_terminal: boolean };
}

/** State of a command. */
export type CommandState = 'running' | 'awaiting_input' | 'exited' | 'killed' | 'lost';

/** Why a waiting call returned (docs/waiting.md). */
export type WaitReason =
  | 'exited'
  | 'silence'
  | 'total_timeout'
  | 'awaiting_input'
  | 'until_matched'
  | 'cancelled'
  | 'background';

/** The kinds of prompt the classifier recognises. */
export type PromptKind = 'password' | 'yes_no' | 'pager' | 'repl' | 'press_key' | 'screen' | 'text';

/** A detected prompt. */
export interface PromptInfo {
  kind: PromptKind;
  text: string;
}

/** What a call says about the command's output log. */
export interface OutputInfo {
  bytes_total: number;
  lines_total: number;
  truncated: boolean;
  omitted_lines: number;
  log_path?: string;
}

/** A page of the text view (`read_output` with `offset`). */
export interface PageInfo {
  from_line: number;
  to_line: number;
  total_lines: number;
  remaining_lines: number;
  dropped_lines: number;
}

/** The result of every command tool (docs/tools.md `CommandResult`). */
export interface CommandResult {
  status: 'completed' | 'partial';
  command_id: string;
  session_id: string;
  output: string;
  exit_code?: number | null;
  signal?: string | null;
  state: CommandState;
  reason: WaitReason;
  prompt?: PromptInfo;
  cwd?: string;
  /** True when the completed foreground command changed the session's cwd (`cwd` is then the new one). */
  cwd_changed?: true;
  isolated?: boolean;
  /** True (with `isolated`) when it ran isolated because a person held the session's terminal. */
  held_by_person?: true;
  /**
   * True on a command whose typed line a program holding the terminal read instead of the shell: it did
   * not run in the shell (`state: "lost"`, exit code unknown).
   */
  swallowed?: true;
  duration_ms: number;
  /** The pause_timeout that applied (seconds), on a result that returned for silence. */
  pause_timeout?: number;
  output_info: OutputInfo;
  page?: PageInfo;
  screen?: import('./driver.js').ScreenSnapshot;
  /**
   * `"screen"` when `output` is the compact screen of a full-screen program (alternate screen or
   * cursor-addressed redraws) instead of the text view.
   */
  output_view?: 'screen';
  /** True on the result of the command whose end was the end of the session's shell (`exit`, `set -e`). */
  session_ended?: true;
  /** True on the first result in a default session that was recreated after its shell exited. */
  new_shell?: true;
  /**
   * On a completed command that failed because of its session's sandbox: which rule refused what, and what
   * is allowed (the exit code stays the command's own).
   */
  hint?: string;
}

/** A command as reported by `list_processes`. */
export interface ProcessInfo {
  command_id: string;
  session_id: string;
  /** The command's text; in a listing, cut (ending in `…`) when longer than the listing allows. */
  command: string;
  /** Present only when `command` was cut: the length of the whole text, in characters. */
  command_chars?: number;
  pid: number | null;
  pgid?: number;
  state: CommandState;
  exit_code: number | null;
  signal: string | null;
  background: boolean;
  isolated: boolean;
  started_at: string;
  ended_at?: string;
  duration_ms: number;
  output_bytes: number;
  log_path?: string;
  /**
   * On an ended command: the live processes it left behind (tagged with its id, e.g. a `setsid` daemon or
   * a `&` job), which `kill_process` on the command kills. Absent when there are none or the host cannot
   * tell.
   */
  escaped_pids?: number[];
}

/** A command's raw output read by absolute byte offset (`SessionManager.readBytes`). */
export interface ByteRead {
  /** The bytes as UTF-8 text, terminal escape sequences kept. */
  text: string;
  /** Absolute offset of the first byte returned (later than asked when older bytes were dropped). */
  from_byte: number;
  /** Absolute offset after the last byte returned: the offset for the next read. */
  next_byte: number;
  /** Every byte the command has printed so far. */
  bytes_total: number;
  /** Bytes between the asked offset and `from_byte` that are no longer kept in memory (0 if none). */
  dropped_bytes: number;
  state: CommandState;
  exit_code: number | null;
  signal: string | null;
}

/** Result of `kill_process`. */
export interface KillResult {
  command_id: string;
  result: 'killed' | 'already_exited' | 'stop_unconfirmed';
  exit_code: number | null;
  signal: string | null;
  survivors: number[];
}

/** Result of `close_session`. */
export interface CloseSessionResult {
  session_id: string;
  closed: true;
  killed_command_ids: string[];
}

/** Per-call context from a face: cancellation and progress. */
export interface CallContext {
  /** Aborting ends the wait with reason `cancelled`; the command keeps running. */
  signal?: AbortSignalLike;
  /** Called at least every 2 s while waiting, with the newest output line. */
  onProgress?: (progress: { elapsed_ms: number; message: string }) => void;
  /**
   * How the calling face names operations in the texts the engine writes into a result (the omission
   * notice's paging operation). Default: the verbs themselves.
   */
  vocabulary?: Vocabulary;
}

/** The part of AbortSignal the core uses (so the core does not depend on DOM or Node types). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The timing options shared by every waiting call, in seconds (docs/waiting.md). */
export interface WaitOptions {
  pause_timeout?: number;
  total_timeout?: number;
  until?: string;
}
