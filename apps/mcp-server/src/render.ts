/**
 * The text block of every tool result: the same result as `structuredContent`, rendered for clients (and
 * models) that read only text. A CommandResult renders as its output followed by one compact status line
 * that says what happened and what to call next.
 */

import type {
  CloseSessionResult,
  CommandResult,
  KillResult,
  PolicyDecision,
  ProcessInfo,
  SessionInfo,
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

/** What the renderer knows about the call besides its result. */
export interface CallInfo {
  /** Effective pause_timeout of the call, seconds. */
  pauseTimeoutS?: number;
  /** Effective total_timeout of the call, seconds. */
  totalTimeoutS?: number;
}

function promptAdvice(result: CommandResult): string {
  switch (result.prompt?.kind) {
    case 'password':
      return 'answer with respond secret:true';
    case 'yes_no':
      return 'answer with respond (e.g. "y" or "n")';
    case 'pager':
      return 'send_control "q" to quit, "space" for the next page';
    case 'press_key':
      return 'press a key with send_control (e.g. "enter")';
    case 'screen':
      return 'output is its screen; press keys with send_control, read_output view:"screen" to look again';
    default:
      return 'answer with respond, or press keys with send_control';
  }
}

/** The status line of a CommandResult, e.g. `[completed exit_code=0 in 12 ms · cwd=/tmp]`. */
export function commandStatusLine(result: CommandResult, call: CallInfo = {}): string {
  const parts: string[] = [];
  if (result.status === 'completed') {
    let head = 'completed';
    if (result.state !== 'exited') head += ` (${result.state})`;
    head += ` exit_code=${result.exit_code === undefined || result.exit_code === null ? 'unknown' : result.exit_code}`;
    if (result.signal) head += ` signal=${result.signal}`;
    head += ` in ${formatDuration(result.duration_ms)}`;
    parts.push(head);
    if (result.cwd !== undefined) parts.push(`cwd=${result.cwd}`);
    if (result.isolated) parts.push('isolated');
    parts.push(`command_id=${result.command_id}`);
  } else {
    let head: string;
    let next: string;
    switch (result.reason) {
      case 'silence':
        head = `partial: silence${call.pauseTimeoutS === undefined ? '' : ` for ${formatSeconds(call.pauseTimeoutS)}`}, still running`;
        next = 'use read_output to wait for more, respond/send_control for input, kill_process to stop';
        break;
      case 'total_timeout':
        head = `partial: still printing after ${call.totalTimeoutS === undefined ? 'total_timeout' : formatSeconds(call.totalTimeoutS)}`;
        next = 'use read_output to keep reading, kill_process to stop';
        break;
      case 'awaiting_input':
        head = `partial: awaiting input${result.prompt ? ` (${result.prompt.kind} prompt ${JSON.stringify(result.prompt.text)})` : ''}`;
        next = promptAdvice(result);
        break;
      case 'until_matched':
        head = 'partial: until matched, still running';
        next = 'use read_output/respond/send_control';
        break;
      case 'cancelled':
        head = 'partial: call cancelled, command still running';
        next = 'use read_output to resume, kill_process to stop';
        break;
      case 'background':
        head = 'partial: running in the background';
        next = 'use read_output for its output, kill_process to stop it';
        break;
      default:
        head = `partial: ${result.reason}`;
        next = 'use read_output/respond/send_control';
    }
    parts.push(head);
    parts.push(`state=${result.state}`);
    if (result.isolated) parts.push('isolated');
    parts.push(`running ${formatDuration(result.duration_ms)}`);
    parts.push(`command_id=${result.command_id}`);
    parts.push(next);
  }
  if (result.session_id !== 'default') parts.push(`session_id=${result.session_id}`);
  if (result.output_info.truncated && result.output_info.log_path)
    parts.push(`full log: ${result.output_info.log_path}`);
  return `[${parts.join(' · ')}]`;
}

/** Output first, then the status line (and the screen's cursor and mode for the screen view). */
export function renderCommandResult(result: CommandResult, call: CallInfo = {}): string {
  const lines: string[] = [];
  if (result.new_shell) lines.push('new shell: cwd and environment were reset');
  if (result.output !== '') lines.push(result.output.replace(/\n$/, ''));
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
  lines.push(commandStatusLine(result, call));
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
  if (s.pid !== undefined) bits.push(`pid=${s.pid}`);
  if (s.foreground_command_id) bits.push(`running=${s.foreground_command_id}`);
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
    return `${p.command_id} · ${p.session_id} · ${kind} · pid=${p.pid ?? '-'} · ${end}${left} · ${formatDuration(p.duration_ms)} · ${p.output_bytes} B · ${JSON.stringify(p.command)}`;
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
