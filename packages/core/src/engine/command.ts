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
}

/** How a command ended. */
export interface CommandEnd {
  state: 'exited' | 'killed' | 'lost';
  exitCode: number | null;
  signal: string | null;
  cwd?: string;
}

/** One command and its output (see the module doc). */
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
  /** Fires after each chunk of output has been appended to the log. */
  readonly onOutput = new Emitter<void>();
  /** Fires once when the command has ended and its output is complete. */
  readonly onEnd = new Emitter<void>();

  state: CommandState = 'running';
  exitCode: number | null = null;
  signal: string | null = null;
  endedAt: number | undefined;
  endedIso: string | undefined;
  /** The session shell's cwd after a completed foreground command. */
  cwdAfter: string | undefined;
  /** The session shell's cwd when this foreground command was typed (undefined when not known). */
  cwdBefore: string | undefined;
  pid: number | undefined;
  /** The last prompt detected while the command was waiting for input. */
  prompt: PromptInfo | undefined;
  /** When output last arrived (clock ms); the start time before any output. */
  lastOutputAt: number;
  /** Increments on every output chunk. */
  outputSeq = 0;
  /** The read cursor: where the next non-paged read starts. */
  cursor: OutputCursor;
  /** Set by kill_process so that the end is reported as `killed`. */
  killRequested = false;
  /** The log's redraw count when the text view was last read (see {@link fullScreen}). */
  redrawsAtRead = 0;
  /** Set when the end of this command was the end of its session's shell. */
  sessionEnded = false;
  /** Set on the first command of a default session recreated after its shell exited; cleared once said. */
  newShell = false;
  /** Text typed into a shell without Enter yet (for the policy check of interactive input). */
  pendingShellInput = '';
  /**
   * True from typing a foreground command's line until the shell starts it (its start marker): until then
   * it cannot be waiting for input (the shell has not run it).
   */
  awaitingStart = false;
  /** Set when its typed line looked taken by another reader once; a second look decides. */
  swallowSuspected = false;
  /** Set when a program holding the terminal read its typed line instead of the shell (it never ran there). */
  swallowed = false;
  /** Set on an isolated command that ran isolated because a person held the session's terminal. */
  heldByPerson = false;
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
    this.startedAt = init.clock.now();
    this.startedIso = init.clock.isoNow();
    this.lastOutputAt = this.startedAt;
    this.cursor = init.log.cursorAtStart();
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
    return repaints && this.log.redraws > this.redrawsAtRead;
  }

  /** True once the command has ended (exited, killed or lost). */
  get ended(): boolean {
    return this.state === 'exited' || this.state === 'killed' || this.state === 'lost';
  }

  /** Appends output (already stripped of markers and secrets). */
  appendOutput(bytes: Uint8Array): void {
    if (this.ended || bytes.length === 0) return;
    this.log.append(bytes);
    this.lastOutputAt = this.clock.now();
    this.outputSeq++;
    if (this.state === 'awaiting_input') {
      this.state = 'running';
      this.prompt = undefined;
    }
    this.onOutput.emit();
  }

  /**
   * Records that the command is waiting for input; false (nothing recorded) once it ended, or while its
   * typed line has not started.
   */
  markAwaitingInput(prompt: PromptInfo): boolean {
    if (this.ended || this.awaitingStart) return false;
    this.state = 'awaiting_input';
    this.prompt = prompt;
    return true;
  }

  /** Records that input was sent (the command is no longer known to be waiting). */
  markInputSent(): void {
    if (this.state === 'awaiting_input') this.state = 'running';
    this.prompt = undefined;
  }

  /** Ends the command once; later calls are ignored. Finishes the log first, then fires `onEnd`. */
  end(end: CommandEnd): void {
    if (this.ended) return;
    this.log.finish();
    // Every line is in the spill now: release its file handle (reads reopen it when they need it).
    this.log.close(false);
    this.state = this.killRequested && end.state === 'exited' ? 'killed' : end.state;
    this.exitCode = end.exitCode;
    this.signal = end.signal;
    this.cwdAfter = end.cwd;
    this.prompt = undefined;
    this.endedAt = this.clock.now();
    this.endedIso = this.clock.isoNow();
    this.onEnd.emit();
    this.onOutput.clear();
    this.onEnd.clear();
  }

  /** Milliseconds since start (until the end, once ended). */
  durationMs(): number {
    return Math.max(0, Math.round((this.endedAt ?? this.clock.now()) - this.startedAt));
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
      pid: this.pid ?? null,
      state: this.state,
      exit_code: this.exitCode,
      signal: this.signal,
      background: this.background,
      isolated: this.isolated,
      started_at: this.startedIso,
      duration_ms: this.durationMs(),
      output_bytes: this.log.bytesTotal,
    };
    if (this.isolated && this.pid !== undefined) info.pgid = this.pid;
    if (this.endedIso !== undefined) info.ended_at = this.endedIso;
    const path = this.log.spillPath;
    if (path !== undefined) info.log_path = path;
    return info;
  }
}
