/**
 * The text block of every tool result: the same result as `structuredContent`, rendered for clients (and
 * models) that read only text. A CommandResult renders as one short status line that says what happened
 * and what to call next, followed by its output.
 */

import {
  type CloseSessionResult,
  describeSandbox,
  HELD_BY_PERSON_NOTE,
  type KillResult,
  type LeanCommandResult,
  type PolicyDecision,
  type ProcessInfo,
  type SessionInfo,
  SWALLOWED_NOTE,
} from '@conch/core';
import type { ErrorInfo } from './schemas.js';

/** Formats milliseconds as `12 ms`, `3.4 s`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '? ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) {
    const s = ms / 1000;
    return `${s < 10 ? s.toFixed(1).replace(/\.0$/, '') : Math.round(s)} s`;
  }
  const totalS = Math.round(ms / 1000);
  const min = Math.floor(totalS / 60);
  const s = totalS % 60;
  return s === 0 ? `${min} min` : `${min} min ${s} s`;
}

/** Formats seconds as given by a caller (`9 s`, `0.5 s`). */
function formatSeconds(s: number): string {
  return `${Number.isInteger(s) ? s : Number(s.toFixed(3))} s`;
}

/** What a command waiting for input waits at, and the one call that answers it. */
function promptStatus(result: LeanCommandResult, id: string): { what: string; next: string } {
  switch (result.prompt?.kind) {
    case 'password':
      return { what: 'waiting at a password prompt', next: `respond ${id} secret=true` };
    case 'yes_no':
      return { what: 'waiting at a yes/no prompt', next: `respond ${id} text="y" or "n"` };
    case 'pager':
      return { what: 'waiting in a pager', next: `send_control ${id} key="q" (or "space" for more)` };
    case 'press_key':
      return { what: 'waiting for a key press', next: `send_control ${id} key="enter"` };
    case 'screen':
      return { what: 'a full-screen program is waiting for keys', next: `send_control ${id}` };
    case 'repl':
      return { what: 'waiting at a REPL prompt', next: `respond ${id}` };
    default:
      return { what: 'waiting for input', next: `respond ${id}` };
  }
}

/**
 * The status line of a CommandResult: the first line of its text, short because an agent pays for it
 * on every call (docs/output.md "Results").
 *
 * Completed: `[exit 0 · 9 ms]`; then, only when they say something, the signal, the new cwd (when the
 * command changed it), `isolated` (its cd/export did not change the session; `isolated: a person holds the
 * terminal` when that was why, also on a partial result), and the command id while
 * it is still useful (the output was cut, or a page was read: `read_output` pages through the log).
 * Another end than a normal exit is named first
 * (`[killed · exit 143 · SIGTERM · 3 s]`). Partial: what is running, and the one call to make next
 * (`[running 9.1 s, quiet for 9 s · next: read_output command_id=c_…]`).
 */
export function commandStatusLine(result: LeanCommandResult): string {
  const id = `command_id=${result.command_id}`;
  const parts: string[] = [];
  if (result.status === 'completed') {
    if (result.state !== 'exited') parts.push(result.state);
    parts.push(`exit ${typeof result.exit_code === 'number' ? result.exit_code : 'unknown'}`);
    if (result.signal) parts.push(result.signal);
    parts.push(formatDuration(result.duration_ms));
    if (result.cwd_changed && result.cwd !== undefined) parts.push(`cwd ${result.cwd}`);
    if (result.isolated) parts.push(result.held_by_person ? HELD_BY_PERSON_NOTE : 'isolated');
    if (result.output_info?.truncated || result.page) parts.push(id);
    return `[${parts.join(' · ')}]`;
  }
  const running = `running ${formatDuration(result.duration_ms)}`;
  let what: string;
  let next = `read_output ${id}`;
  // A command known to wait for input needs an answer, whatever ended this call.
  const reason = result.state === 'awaiting_input' ? 'awaiting_input' : result.reason;
  switch (reason) {
    case 'silence':
      what =
        result.pause_timeout === undefined || result.pause_timeout === 0
          ? running
          : `${running}, quiet for ${formatSeconds(result.pause_timeout)}`;
      break;
    case 'total_timeout':
      what = `${running}, still printing`;
      break;
    case 'awaiting_input':
      ({ what, next } = promptStatus(result, id));
      break;
    case 'until_matched':
      what = `${running}, until matched`;
      break;
    case 'cancelled':
      what = `${running}, call cancelled`;
      break;
    case 'background':
      what = 'running in the background';
      break;
    default:
      what = running;
  }
  const held = result.held_by_person ? ` · ${HELD_BY_PERSON_NOTE}` : '';
  return `[${what}${held} · next: ${next}]`;
}

/**
 * The text block of a CommandResult: the status line first (a client that keeps only the head of a long
 * result still shows it), then a note when the default session was recreated, the output, a note when
 * the session's shell exited, and the screen's size, cursor and mode for the screen view.
 */
export function renderCommandResult(result: LeanCommandResult): string {
  const lines: string[] = [commandStatusLine(result)];
  if (result.new_shell) lines.push('new shell: cwd and environment were reset');
  if (result.hint) lines.push(`sandbox: ${result.hint}`);
  if (result.output !== '') lines.push(result.output.replace(/\n$/, ''));
  if (result.swallowed) lines.push(SWALLOWED_NOTE);
  if (result.session_ended) {
    lines.push(
      result.session_id === 'default'
        ? "the session's shell exited; the next command starts a new one"
        : "the session's shell exited; the session is closed (create_local opens a new one)",
    );
  }
  if (result.output_view === 'screen') lines.push('[output is the screen of a full-screen program]');
  if (result.screen) {
    lines.push(
      `[screen ${result.screen.cols}x${result.screen.rows_count} · cursor row=${result.screen.cursor.row} col=${result.screen.cursor.col}` +
        ` · alt_screen=${result.screen.alt_screen}]`,
    );
  }
  return lines.join('\n');
}

/** One line per session. */
export function renderSession(s: SessionInfo): string {
  const bits = [
    `${s.session_id}${s.name !== s.session_id ? ` (${s.name})` : ''}`,
    s.kind === 'ssh'
      ? `ssh ${s.username ? `${s.username}@` : ''}${s.host ?? '?'}${s.port && s.port !== 22 ? `:${s.port}` : ''}`
      : 'local',
    s.state,
    `shell=${s.shell}`,
    `cwd=${s.cwd ?? 'unknown'}`,
  ];
  if (s.sandbox !== undefined) bits.push(`sandbox: ${describeSandbox(s.sandbox)}`);
  if (s.pid !== undefined) bits.push(`pid=${s.pid}`);
  if (s.foreground_command_id) bits.push(`running=${s.foreground_command_id}`);
  if (s.attached)
    bits.push(
      `attached=${s.attached.viewers}${s.attached.holds_terminal ? ' (a person holds the terminal)' : ''}`,
    );
  bits.push(`commands=${s.command_ids.length}`);
  return bits.join(' · ');
}

/** `create_local`. */
export function renderCreatedSession(s: SessionInfo): string {
  return `Session ready: ${renderSession(s)}\nPass session_id="${s.session_id}" to execute to run commands in it.`;
}

/** `connect_ssh`: the session, the host key, the policy's note and the banner. */
export function renderConnectedSession(
  s: SessionInfo & {
    banner: string;
    host_key_fingerprint: string;
    host_key_type: string;
    host_key_note?: string;
    via?: string[];
  },
): string {
  const lines = [
    `Connected: ${renderSession(s)}`,
    `Host key: ${s.host_key_type} ${s.host_key_fingerprint}${s.via && s.via.length > 0 ? ` · via ${s.via.join(' → ')}` : ''}`,
  ];
  if (s.host_key_note) lines.push(`Note: ${s.host_key_note}`);
  const banner = s.banner.replace(/\s+$/, '');
  if (banner !== '') lines.push('Banner:', banner);
  lines.push(
    `Pass session_id="${s.session_id}" to execute, read_output and the other tools, as for a local session. ` +
      'If the connection dies the session becomes "lost" (list_sessions): then connect_ssh again.',
  );
  return lines.join('\n');
}

/** `list_sessions`. */
export function renderSessions(result: { sessions: SessionInfo[] }): string {
  if (result.sessions.length === 0)
    return 'No sessions open. execute without session_id creates the "default" session.';
  return [`${result.sessions.length} session(s):`, ...result.sessions.map(renderSession)].join('\n');
}

/** `close_session`. */
export function renderClosed(result: CloseSessionResult): string {
  const killed = result.killed_command_ids.length === 0 ? 'none' : result.killed_command_ids.join(', ');
  return `Session ${result.session_id} closed. Killed commands: ${killed}.`;
}

/** `list_processes`. */
export function renderProcesses(result: { processes: ProcessInfo[] }): string {
  if (result.processes.length === 0) return 'No commands.';
  const lines = result.processes.map((p) => {
    const end =
      p.state === 'running' || p.state === 'awaiting_input'
        ? p.state
        : `${p.state} exit_code=${p.exit_code ?? 'unknown'}${p.signal ? ` signal=${p.signal}` : ''}`;
    const kind = p.background ? 'background' : p.isolated ? 'isolated' : 'foreground';
    const left = p.escaped_pids ? ` · left running: ${p.escaped_pids.join(', ')}` : '';
    return `${p.command_id} · ${p.session_id} · ${kind} · pid=${p.pid ?? '-'} · ${end}${left} · ${formatDuration(p.duration_ms)} · ${p.output_bytes} B · ${JSON.stringify(p.command)}${p.command_chars === undefined ? '' : ` (cut; ${p.command_chars} chars in all)`}`;
  });
  return [`${result.processes.length} command(s):`, ...lines].join('\n');
}

/** `kill_process`. */
export function renderKill(result: KillResult): string {
  const head =
    result.result === 'already_exited'
      ? `Command ${result.command_id} had already exited`
      : result.result === 'killed'
        ? `Command ${result.command_id} killed`
        : `Command ${result.command_id}: stop unconfirmed`;
  const survivors =
    result.survivors.length === 0
      ? 'no survivors'
      : `survivors (still alive): ${result.survivors.join(', ')}`;
  return `${head} (exit_code=${result.exit_code ?? 'unknown'}, signal=${result.signal ?? 'none'}); ${survivors}.`;
}

/** `check_command`. */
export function renderDecision(result: PolicyDecision): string {
  const lines = [`${result.decision}: ${result.reason}`];
  for (const c of result.commands) {
    lines.push(`  ${c.decision} ${JSON.stringify(c.text)}${c.rule ? ` (rule: ${c.rule})` : ''}`);
  }
  return lines.join('\n');
}

/** The text of an error result: code and message, then the hint. */
export function renderError(error: ErrorInfo): string {
  return `Error ${error.code}: ${error.message}${error.hint ? `\nHint: ${error.hint}` : ''}`;
}
