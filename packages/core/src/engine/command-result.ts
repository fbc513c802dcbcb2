/**
 * Building a `CommandResult` (docs/tools.md) from a command and why its wait ended: the text since the
 * previous read (which moves the command's read cursor), the compact screen while a full-screen program
 * runs, a page of the log, the raw bytes, or the rendered screen.
 */

import type { Vocabulary } from '../hint.js';
import { compactScreen } from '../output/compact-screen.js';
import { sandboxFailureHint } from '../sandbox/failure-hint.js';
import type { CommandResult } from '../types.js';
import type { Command } from './command.js';
import type { Session } from './session.js';
import type { TextPattern } from './user-pattern.js';
import type { WaitOutcome } from './waiter.js';

/** Why a result is given: the wait's reason, and the prompt seen when it is `awaiting_input`. */
export interface ResultOutcome {
  reason: CommandResult['reason'];
  prompt?: WaitOutcome['prompt'];
}

/**
 * How much of the output a result may carry, the face's words for hints within it, and the command's
 * session (a sandboxed session's result explains a failure its sandbox caused).
 */
export interface ResultBudget {
  maxChars: number;
  maxLines: number;
  vocabulary?: Vocabulary;
  session?: Pick<Session, 'sandbox' | 'cwd'>;
}

/**
 * The result of a command, with `output` the text since the previous read when `read` (the read cursor
 * moves past it), else empty for the caller to fill.
 */
export function commandResult(
  command: Command,
  outcome: ResultOutcome,
  budget: ResultBudget,
  read = true,
): CommandResult {
  const text = read
    ? command.log.readSince(command.cursor, {
        maxChars: budget.maxChars,
        maxLines: budget.maxLines,
        vocabulary: budget.vocabulary,
      })
    : undefined;
  if (text) command.markTextRead(text.next);
  const completed = command.ended;
  const result: CommandResult = {
    status: completed ? 'completed' : 'partial',
    command_id: command.id,
    session_id: command.sessionId,
    output: text?.text ?? '',
    state: command.state,
    reason: completed ? 'exited' : outcome.reason === 'exited' ? 'silence' : outcome.reason,
    duration_ms: command.durationMs(),
    output_info: {
      bytes_total: command.log.bytesTotal,
      lines_total: command.log.linesTotal,
      truncated: text?.truncated ?? false,
      omitted_lines: text?.omittedLines ?? 0,
    },
  };
  if (completed) {
    result.exit_code = command.exitCode;
    result.signal = command.signal;
    const session = budget.session;
    const hint =
      session?.sandbox &&
      sandboxFailureHint(
        session.sandbox.rules,
        result.output,
        command.exitCode,
        command.cwdAfter ?? session.cwd ?? undefined,
      );
    if (hint) result.hint = hint;
    if (!command.isolated && command.cwdAfter !== undefined) {
      result.cwd = command.cwdAfter;
      if (command.cwdBefore !== undefined && command.cwdBefore !== command.cwdAfter)
        result.cwd_changed = true;
    }
  }
  if (command.isolated) result.isolated = true;
  if (command.heldByPerson) result.held_by_person = true;
  if (command.swallowed) result.swallowed = true;
  if (completed && command.sessionEnded) result.session_ended = true;
  if (command.takeNewShellNotice()) result.new_shell = true;
  const prompt = outcome.prompt ?? (command.state === 'awaiting_input' ? command.prompt : undefined);
  if (prompt && !completed) result.prompt = prompt;
  const path = command.log.spillPath;
  if (path !== undefined) result.output_info.log_path = path;
  return result;
}

/**
 * The result of a waiting call in the text view, or, while a full-screen program runs (vim, less, top),
 * with `output` the compact screen (`output_view: "screen"`): its redraws are not readable as text, so
 * the text view skips them and continues from now. `pauseMs`: the pause that applied, given as
 * `pause_timeout` when silence ended the wait (so that a face words "quiet for N s" without deciding the
 * default again).
 */
export async function textViewResult(
  command: Command,
  outcome: ResultOutcome,
  budget: ResultBudget,
  pauseMs: number,
): Promise<CommandResult> {
  const result = await textOrScreen(command, outcome, budget);
  if (result.reason === 'silence') result.pause_timeout = pauseMs / 1000;
  return result;
}

async function textOrScreen(
  command: Command,
  outcome: ResultOutcome,
  budget: ResultBudget,
): Promise<CommandResult> {
  const screenPrompt = command.state === 'awaiting_input' && command.prompt?.kind === 'screen';
  if (command.fullScreen || screenPrompt) {
    const snapshot = await command.terminal.screen().catch(() => undefined);
    if (snapshot) {
      const result = commandResult(command, outcome, budget, false);
      command.skipTextToNow();
      const screen = compactScreen(snapshot);
      result.output = screen.length > budget.maxChars ? screen.slice(0, budget.maxChars) : screen;
      result.output_view = 'screen';
      return result;
    }
  }
  return commandResult(command, outcome, budget, true);
}

/** `read_output` with `view: "raw"`: the newest raw bytes (escape sequences kept), with a note of what was cut. */
export function rawViewResult(command: Command, outcome: ResultOutcome, budget: ResultBudget): CommandResult {
  const result = commandResult(command, outcome, budget, false);
  const raw = command.log.rawTail(budget.maxChars);
  result.output = raw.note === '' ? raw.text : `${raw.note}\n${raw.text}`;
  return result;
}

/**
 * `read_output` with `view: "screen"`: the rendered screen as it is now (the text view then continues
 * from now); without a screen renderer, a result with empty output.
 */
export async function screenViewResult(
  command: Command,
  outcome: ResultOutcome,
  budget: ResultBudget,
): Promise<CommandResult> {
  const result = commandResult(command, outcome, budget, false);
  const screen = await command.terminal.screen();
  if (screen) {
    result.screen = screen;
    result.output = screen.rows.join('\n');
    // The agent has seen the terminal as it is now: the text view continues from here.
    command.skipTextToNow();
  }
  return result;
}

/** A page of the whole log (`offset`/`length`, optionally only the lines `filter` matches); the cursor stays. */
export function pageResult(
  command: Command,
  page: { offset: number; length: number; filter: TextPattern | undefined },
  budget: ResultBudget,
): CommandResult {
  const { offset, length, filter } = page;
  const read = command.log.page({ offset, length, maxChars: budget.maxChars, ...(filter ? { filter } : {}) });
  const result = commandResult(command, { reason: command.ended ? 'exited' : 'silence' }, budget, false);
  result.output = read.text === '' ? read.header : `${read.header}\n${read.text}`;
  result.page = read.info;
  return result;
}
