/**
 * A command: one thing run in a session, with its output log, read cursor and lifecycle. A foreground
 * command is typed into the session shell; an isolated one (background, or sent while the shell was busy)
 * runs as its own process on its own terminal.
 */

import type { Clock } from '../clock.js';
import type { InputWaitEvidence, KillReport, ScreenSnapshot } from '../driver.js';
import type { OutputCursor, OutputLog } from '../output/output-log.js';
import type { CommandState, ProcessInfo, PromptInfo } from '../types.js';
import { Emitter } from './emitter.js';

/** How a command reaches its terminal: a session shell for foreground commands, its own PTY otherwise. */
export interface CommandTerminal {
  write(data: string | Uint8Array, deadlineMs: number): Promise<void>;
  inputWaitEvidence(): Promise<InputWaitEvidence>;
  kill(options: { signal: string; graceMs: number }): Promise<KillReport>;
  screen(): Promise<ScreenSnapshot | undefined>;
  /** Starts masking a secret in this terminal's output. */
  addSecret(secret: string): void;
  /** Name of the program in the terminal's foreground, when the host can tell. */
  foregroundProgram(): Promise<string | undefined>;
  /** Every name of every process in the terminal's foreground process group (empty when unknown). */
  foregroundPrograms(): Promise<string[]>;
}

/** Everything a Command is created with. */
export interface CommandInit {
  id: string;
  sessionId: string;
  text: string;
  isolated: boolean;
  background: boolean;
  log: OutputLog;
  clock: Clock;
  terminal: CommandTerminal;
  /** The session shell's cwd when this foreground command is typed (undefined when not known). */
  cwdBefore?: string;
  /** The pid of an isolated command's own process (a foreground command's is set when it is typed). */
  pid?: number;
  /** An isolated command that runs isolated because a person holds the session's terminal. */
  heldByPerson?: boolean;
}

/** How a command ended. */
export interface CommandEnd {
  state: 'exited' | 'killed' | 'lost';
  exitCode: number | null;
  signal: string | null;
  cwd?: string;
}

/**
 * One command and its output (see the module doc). Its state is read through getters and changed only
 * through its methods, each named for the event that changes it.
 */
export class Command {
  readonly id: string;
  readonly sessionId: string;
  readonly text: string;
  readonly isolated: boolean;
  readonly background: boolean;
  readonly log: OutputLog;
  readonly terminal: CommandTerminal;
  readonly startedAt: number;
  readonly startedIso: string;
  /** The session shell's cwd when this foreground command was typed (undefined when not known). */
  readonly cwdBefore: string | undefined;
  /** True on an isolated command that ran isolated because a person held the session's terminal. */
  readonly heldByPerson: boolean;
  /** Fires after each chunk of output has been appended to the log. */
  readonly onOutput = new Emitter<void>();
  /** Fires once when the command has ended and its output is complete. */
  readonly onEnd = new Emitter<void>();

  #state: CommandState = 'running';
  #exitCode: number | null = null;
  #signal: string | null = null;
  #endedAt: number | undefined;
  #endedIso: string | undefined;
  #cwdAfter: string | undefined;
  #pid: number | undefined;
  #prompt: PromptInfo | undefined;
  #lastOutputAt: number;
  #outputSeq = 0;
  #cursor: OutputCursor;
  #redrawsAtRead = 0;
  #killRequested = false;
  #sessionEnded = false;
  #newShell = false;
  #pendingShellInput = '';
  #awaitingStart = false;
  #swallowSuspected = false;
  #swallowed = false;
  private readonly clock: Clock;

  constructor(init: CommandInit) {
    this.id = init.id;
    this.sessionId = init.sessionId;
    this.text = init.text;
    this.isolated = init.isolated;
    this.background = init.background;
    this.log = init.log;
    this.clock = init.clock;
    this.terminal = init.terminal;
    this.cwdBefore = init.cwdBefore;
    this.#pid = init.pid;
    this.heldByPerson = init.heldByPerson === true;
    this.startedAt = init.clock.now();
    this.startedIso = init.clock.isoNow();
    this.#lastOutputAt = this.startedAt;
    this.#cursor = init.log.cursorAtStart();
  }

  /** Where the command is in its life (docs/tools.md `CommandState`). */
  get state(): CommandState {
    return this.#state;
  }

  /** The exit code once it exited (null while running, or when killed by a signal). */
  get exitCode(): number | null {
    return this.#exitCode;
  }

  /** The signal that ended it, if one did. */
  get signal(): string | null {
    return this.#signal;
  }

  /** When it ended (clock ms). */
  get endedAt(): number | undefined {
    return this.#endedAt;
  }

  /** When it ended (ISO time). */
  get endedIso(): string | undefined {
    return this.#endedIso;
  }

  /** The session shell's cwd after a completed foreground command. */
  get cwdAfter(): string | undefined {
    return this.#cwdAfter;
  }

  /** Its process: the session shell's for a foreground command, its own for an isolated one. */
  get pid(): number | undefined {
    return this.#pid;
  }

  /** The last prompt detected while the command was waiting for input. */
  get prompt(): PromptInfo | undefined {
    return this.#prompt;
  }

  /** When output last arrived (clock ms); the start time before any output. */
  get lastOutputAt(): number {
    return this.#lastOutputAt;
  }

  /** Increments on every output chunk. */
  get outputSeq(): number {
    return this.#outputSeq;
  }

  /** The read cursor: where the next non-paged read starts. */
  get cursor(): OutputCursor {
    return this.#cursor;
  }

  /** True once kill_process asked for its end (so that the end is reported as `killed`). */
  get killRequested(): boolean {
    return this.#killRequested;
  }

  /** True when the end of this command was the end of its session's shell. */
  get sessionEnded(): boolean {
    return this.#sessionEnded;
  }

  /** Text typed into a shell without Enter yet (for the policy check of interactive input). */
  get pendingShellInput(): string {
    return this.#pendingShellInput;
  }

  /**
   * True from typing a foreground command's line until the shell starts it (its start marker): until then
   * it cannot be waiting for input (the shell has not run it).
   */
  get awaitingStart(): boolean {
    return this.#awaitingStart;
  }

  /** True when a program holding the terminal read its typed line instead of the shell (it never ran there). */
  get swallowed(): boolean {
    return this.#swallowed;
  }

  /**
   * True while a full-screen program runs in the command's terminal: it uses the alternate screen, or it
   * repaints with cursor addressing (moved the cursor to a row below the first, or homed it more than
   * once: `top`, `watch`) and has redrawn since the text view was last read. Its output is then read off
   * the screen, not as (smeared) text. A single `clear` is not a full-screen program.
   */
  get fullScreen(): boolean {
    if (this.ended) return false;
    if (this.log.altScreen) return true;
    const repaints = this.log.cursorAddressing > 0 || this.log.redraws >= 2;
    return repaints && this.log.redraws > this.#redrawsAtRead;
  }

  /** True once the command has ended (exited, killed or lost). */
  get ended(): boolean {
    return this.#state === 'exited' || this.#state === 'killed' || this.#state === 'lost';
  }

  /** Appends output (already stripped of markers and secrets). */
  appendOutput(bytes: Uint8Array): void {
    if (this.ended || bytes.length === 0) return;
    this.log.append(bytes);
    this.#lastOutputAt = this.clock.now();
    this.#outputSeq++;
    if (this.#state === 'awaiting_input') {
      this.#state = 'running';
      this.#prompt = undefined;
    }
    this.onOutput.emit();
  }

  /**
   * Records that the command is waiting for input; false (nothing recorded) once it ended, or while its
   * typed line has not started.
   */
  markAwaitingInput(prompt: PromptInfo): boolean {
    if (this.ended || this.awaitingStart) return false;
    this.#state = 'awaiting_input';
    this.#prompt = prompt;
    return true;
  }

  /** Records that input was sent (the command is no longer known to be waiting). */
  markInputSent(): void {
    if (this.#state === 'awaiting_input') this.#state = 'running';
    this.#prompt = undefined;
  }

  /** Ends the command once; later calls are ignored. Finishes the log first, then fires `onEnd`. */
  end(end: CommandEnd): void {
    if (this.ended) return;
    this.log.finish();
    // Every line is in the spill now: release its file handle (reads reopen it when they need it).
    this.log.close(false);
    this.#state = this.#killRequested && end.state === 'exited' ? 'killed' : end.state;
    this.#exitCode = end.exitCode;
    this.#signal = end.signal;
    this.#cwdAfter = end.cwd;
    this.#prompt = undefined;
    this.#endedAt = this.clock.now();
    this.#endedIso = this.clock.isoNow();
    this.onEnd.emit();
    this.onOutput.clear();
    this.onEnd.clear();
  }

  /** kill_process asked for the command's end: an end reported as `exited` from now on counts as `killed`. */
  requestKill(): void {
    this.#killRequested = true;
  }

  /** The foreground command's line was typed into the session shell, whose process is `pid`. */
  markTyped(pid: number | undefined): void {
    this.#awaitingStart = true;
    this.#pid = pid;
  }

  /** The shell started the typed line (its start marker). */
  markStarted(): void {
    this.#awaitingStart = false;
  }

  /**
   * One look found another reader of the terminal waiting while the typed line has not started: true when
   * the look before found the same (two in a row decide that the line was swallowed), else false and the
   * next look decides.
   */
  suspectSwallowed(): boolean {
    if (this.#swallowSuspected) return true;
    this.#swallowSuspected = true;
    return false;
  }

  /** A look found no other reader waiting: the next suspicion starts over. */
  clearSwallowSuspicion(): void {
    this.#swallowSuspected = false;
  }

  /** Ends the command whose typed line a program holding the terminal read instead of the shell. */
  endSwallowed(): void {
    if (this.ended) return;
    this.#swallowed = true;
    this.end({ state: 'lost', exitCode: null, signal: null });
  }

  /** The shell itself ended under this command (`exit 3`, `set -e; false`). */
  markSessionEnded(): void {
    this.#sessionEnded = true;
  }

  /** This is the first command of a default session recreated after its shell exited. */
  markNewShell(): void {
    this.#newShell = true;
  }

  /** True once, on the first result after {@link markNewShell}: the notice is said once. */
  takeNewShellNotice(): boolean {
    const notice = this.#newShell;
    this.#newShell = false;
    return notice;
  }

  /** Holds the text typed into a shell without Enter yet (checked as a whole when a byte submits it). */
  holdShellInput(pending: string): void {
    this.#pendingShellInput = pending;
  }

  /** The text view was read up to `next`: the next read starts there. */
  markTextRead(next: OutputCursor): void {
    this.#cursor = next;
    this.#redrawsAtRead = this.log.redraws;
  }

  /** Moves the text cursor to the end of the log (what is on the screen now was seen). */
  skipTextToNow(): void {
    this.markTextRead(this.log.cursor());
  }

  /** Milliseconds since start (until the end, once ended). */
  durationMs(): number {
    return Math.max(0, Math.round((this.#endedAt ?? this.clock.now()) - this.startedAt));
  }

  /** Asks the terminal for kernel evidence of an input wait (`unknown` once ended). */
  inputWaitEvidence(): Promise<InputWaitEvidence> {
    return this.ended ? Promise.resolve('no') : this.terminal.inputWaitEvidence();
  }

  /** The `list_processes` row. */
  toProcessInfo(): ProcessInfo {
    const info: ProcessInfo = {
      command_id: this.id,
      session_id: this.sessionId,
      command: this.text,
      pid: this.#pid ?? null,
      state: this.#state,
      exit_code: this.#exitCode,
      signal: this.#signal,
      background: this.background,
      isolated: this.isolated,
      started_at: this.startedIso,
      duration_ms: this.durationMs(),
      output_bytes: this.log.bytesTotal,
    };
    if (this.isolated && this.#pid !== undefined) info.pgid = this.#pid;
    if (this.#endedIso !== undefined) info.ended_at = this.#endedIso;
    const path = this.log.spillPath;
    if (path !== undefined) info.log_path = path;
    return info;
  }
}
