/**
 * How the CLI prints results for a person: the output on stdout, a short status line on stderr, tables
 * for processes and sessions, and the exit code a command line expects.
 */

import { constants } from 'node:os';
import { describeSandbox, HELD_BY_PERSON_NOTE, type SandboxRules, SWALLOWED_NOTE } from '@conch/core';
import { escapeControls, formatTable, stylesFor } from './terminal-output.js';
import { CLI_VOCABULARY } from './tool-call.js';

/** The fields of a CommandResult the CLI reads. */
export interface CommandResult {
  status: 'completed' | 'partial';
  command_id: string;
  session_id: string;
  output: string;
  /** Why the session's sandbox made it fail, and what it allows. */
  hint?: string;
  exit_code?: number | null;
  signal?: string | null;
  state: string;
  reason: string;
  prompt?: { kind: string; text: string };
  cwd?: string;
  duration_ms: number;
  screen?: { rows: string[] };
  new_shell?: true;
  held_by_person?: boolean;
  swallowed?: boolean;
}

/**
 * The exit code of `conch exec/read/respond/key`: the command's own when it completed (128+N when a
 * signal ended it, 1 when unknown); 0 while it still runs.
 */
export function exitCodeOf(result: CommandResult): number {
  if (result.status === 'partial') return 0;
  if (typeof result.exit_code === 'number') return result.exit_code;
  const signal = result.signal
    ? constants.signals[result.signal as keyof typeof constants.signals]
    : undefined;
  return signal === undefined ? 1 : 128 + signal;
}

/** A status line of conch's own on stderr: agent-controlled parts escaped, one line. */
export function statusLine(text: string): void {
  process.stderr.write(`${escapeControls(text)}\n`);
}

/** Prints a CommandResult for a person and returns the exit code. */
export function printCommandResult(result: CommandResult): number {
  const err = stylesFor(process.stderr);
  if (result.new_shell) {
    process.stderr.write(
      `${err.yellow('[new shell]')} ${err.dim(`${escapeControls(result.session_id)} runs in a new shell: its cwd and environment were reset`)}\n`,
    );
  }
  if (result.output)
    process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
  const code = exitCodeOf(result);
  if (result.held_by_person) process.stderr.write(`${err.dim(`[${HELD_BY_PERSON_NOTE}]`)}\n`);
  if (result.swallowed) process.stderr.write(`${err.red(`[${SWALLOWED_NOTE}]`)}\n`);
  if (result.status === 'completed') {
    if (code !== 0 || result.signal) {
      const what = result.signal ? `${result.signal}` : `exit ${result.exit_code ?? 'unknown'}`;
      process.stderr.write(`${err.red(`[${escapeControls(what)}]`)}\n`);
    }
    if (result.hint) process.stderr.write(`${err.dim(`sandbox: ${escapeControls(result.hint)}`)}\n`);
    return code;
  }
  const id = escapeControls(result.command_id);
  const { respond, sendControl } = CLI_VOCABULARY;
  const why =
    result.state === 'awaiting_input'
      ? `waiting for input${result.prompt ? ` (${escapeControls(result.prompt.kind)})` : ''}: answer with ${respond} ${id} TEXT, or press keys with ${sendControl} ${id} KEY`
      : stillRunningHint(result.command_id);
  process.stderr.write(`${err.yellow(`[still running: ${id}]`)} ${err.dim(why)}\n`);
  return code;
}

/** How to read more of a running command, or stop it. */
export function stillRunningHint(commandId: string): string {
  const id = escapeControls(commandId);
  return `read more with ${CLI_VOCABULARY.readOutput} ${id}, stop it with ${CLI_VOCABULARY.killProcess} ${id}`;
}

/** One process row as `list_processes` returns it. */
interface ProcessRow {
  command_id: string;
  session_id: string;
  command: string;
  pid: number;
  state: string;
  exit_code: number | null;
  background: boolean;
  duration_ms: number;
}

/** The `conch ps` table. */
export function processTable(processes: readonly ProcessRow[]): string {
  if (processes.length === 0) return 'No commands.';
  return formatTable(
    ['ID', 'SESSION', 'PID', 'STATE', 'EXIT', 'TIME', 'COMMAND'],
    processes.map((p) => [
      p.command_id,
      p.session_id,
      String(p.pid),
      p.background ? `${p.state} (bg)` : p.state,
      p.exit_code === null || p.exit_code === undefined ? '-' : String(p.exit_code),
      `${(p.duration_ms / 1000).toFixed(1)}s`,
      p.command,
    ]),
  );
}

/** One session as `list_sessions` returns it. */
interface SessionRow {
  session_id: string;
  kind: string;
  name: string;
  state: string;
  cwd: string;
  host?: string;
  username?: string;
  attached?: { viewers: number; holds_terminal: boolean };
  sandbox?: SandboxRules;
}

/** The ATTACHED cell: how many people watch, and `holds` when one of them holds the terminal. */
function attachedCell(attached: SessionRow['attached']): string {
  if (!attached) return '-';
  return attached.holds_terminal ? `${attached.viewers}, holds` : String(attached.viewers);
}

/** The `conch sessions` table. */
export function sessionTable(sessions: readonly SessionRow[]): string {
  if (sessions.length === 0) return 'No sessions.';
  return formatTable(
    ['ID', 'NAME', 'KIND', 'STATE', 'ATTACHED', 'WHERE', 'SANDBOX'],
    sessions.map((s) => [
      s.session_id,
      s.name,
      s.kind,
      s.state,
      attachedCell(s.attached),
      s.kind === 'ssh' ? `${s.username ? `${s.username}@` : ''}${s.host ?? ''}:${s.cwd}` : s.cwd,
      s.sandbox === undefined ? '-' : describeSandbox(s.sandbox),
    ]),
  );
}
