/**
 * The parameters of the engine's calls (docs/tools.md), as the faces pass them after validating their
 * shape; the engine resolves defaults and ranges (parameters.ts).
 */

import type { DriverKind } from '../driver.js';
import type { SandboxRules } from '../sandbox/rules.js';
import type { WaitOptions } from '../types.js';

/** `create_local` parameters. */
export interface CreateLocalRequest {
  shell?: string;
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  name?: string;
  /** Run the session inside an OS sandbox with these (resolved) rules; fixed for the session's life. */
  sandbox?: SandboxRules;
}

/** Parameters for opening a session on any driver (used by `create_local` and `connect_ssh`). */
export interface OpenSessionRequest extends CreateLocalRequest {
  kind: DriverKind;
  host?: string;
  port?: number;
  username?: string;
  /** The container a container session runs in (its name), and its image (for `list_sessions`). */
  container?: string;
  image?: string;
  /** Fixed id (only the default session uses this). */
  id?: string;
}

/** `execute` parameters. */
export interface ExecuteRequest extends WaitOptions {
  command: string;
  session_id?: string;
  background?: boolean;
  cwd?: string;
  max_output_chars?: number;
}

/** `read_output` parameters. */
export interface ReadOutputRequest extends WaitOptions {
  command_id: string;
  offset?: number;
  length?: number;
  view?: 'text' | 'screen' | 'raw';
  filter?: string;
  max_output_chars?: number;
}

/** `respond` parameters. */
export interface RespondRequest extends WaitOptions {
  command_id: string;
  text: string;
  enter?: boolean;
  secret?: boolean;
}

/** `send_control` parameters. */
export interface SendControlRequest extends WaitOptions {
  command_id: string;
  key: string | string[];
}

/** `list_processes` parameters. */
export interface ListProcessesRequest {
  filter?: string;
  session_id?: string;
  include_finished?: boolean;
}

/** `kill_process` parameters. */
export interface KillProcessRequest {
  command_id: string;
  signal?: string;
  grace_s?: number;
}
