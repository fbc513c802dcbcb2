/**
 * The one rule for "is this session's shell free for an agent's typed command?", and what it is judged
 * from. A session is busy whenever its shell is not waiting at an empty prompt, whoever made it so:
 *
 * - conch's own foreground command runs (the engine's bookkeeping);
 * - a person submitted a line through `conch attach` and the shell has not shown its prompt since (it runs
 *   the person's command, or a program — `cat`, `vim`, the shell's own `read`, a continuation line — reads
 *   what they type); the shell reports each prompt with a marker;
 * - a person's line is unfinished (see person-line.ts; keys typed while a full-screen program shows its
 *   screen are that program's and leave the line alone);
 * - a look at the terminal (its driver's kernel facts) finds its foreground process group is not the
 *   shell's, or — when a person's Enter may still wait in the terminal's input queue (typed while the shell
 *   was not at its prompt) — that the shell is not waiting for input. The look costs a probe, so it is
 *   taken only while a person can type or such type-ahead is unresolved; a host that cannot tell leaves
 *   the decision to the prompt marker and the typed line.
 *
 * When unsure, busy: the agent's command then runs isolated (its own terminal), which is always safe.
 */

import type { InputWaitEvidence } from '../driver.js';
import { EMPTY_LINE, type PersonLine, type SubmittedLine, typeKeys } from '../input/person-line.js';
import { AltScreenWatch } from '../output/alt-screen-watch.js';

/** The status-line note of a command that ran isolated because a person held the terminal (said once). */
export const HELD_BY_PERSON_NOTE = 'isolated: a person holds the terminal';

/** The note of a command whose typed line a program holding the terminal read instead of the shell. */
export const SWALLOWED_NOTE =
  "not run: a program holding the terminal (a person's) read its text instead of the shell; run it again";

/** What a look at the terminal found (see the module doc). */
export interface TerminalLook {
  /** True when the terminal's foreground process group is the shell's; undefined when the host cannot tell. */
  shellHolds: boolean | undefined;
  /** Whether the foreground group waits for input; asked only while type-ahead is unresolved. */
  evidence?: InputWaitEvidence;
}

/** The verdict for one agent command. */
export interface BusyVerdict {
  /** True when the command may be typed into the shell. */
  free: boolean;
  /** True when it may not because of a person (not because of conch's own command). */
  byPerson: boolean;
}

/** Whether evidence says the foreground group waits for input. */
export function readsInput(evidence: InputWaitEvidence | undefined): boolean {
  return evidence === 'blocked_read' || evidence === 'polling';
}

/** One session's sharing state (see the module doc). */
export class TerminalBusy {
  /** People watching through `conch attach`. */
  viewers = 0;
  /** Those of them whose keystrokes are forwarded. */
  typists = 0;
  private line: PersonLine = EMPTY_LINE;
  /** A person submitted a line and the shell has not shown its prompt since. */
  private promptPending = false;
  /** A person's Enter may still wait in the terminal's input queue (typed while the shell was not at its prompt). */
  private typeAhead = false;
  /** Whether the terminal shows the alternate screen (a full-screen program reads every key itself). */
  private readonly altScreen = new AltScreenWatch();

  /** True while a person holds the terminal, as far as known without looking at it. */
  get personHolds(): boolean {
    return this.line.pending || this.promptPending;
  }

  /** True when {@link judge} needs a look at the terminal. */
  get needsLook(): boolean {
    return this.typists > 0 || this.typeAhead;
  }

  /** True when the look must include whether the foreground group waits for input. */
  get needsEvidence(): boolean {
    return this.typeAhead;
  }

  /**
   * Follows a person's keystrokes. `conchRuns`: conch's own foreground command runs. Returns the line the
   * person submitted at the shell's prompt, if these keys did (what the shell runs as the person's command;
   * lines typed into a program are not returned: they may be secret input).
   */
  typed(keys: string, conchRuns: boolean): SubmittedLine | undefined {
    if (this.altScreen.on) return undefined;
    const atPrompt = !conchRuns && !this.promptPending;
    const { line, submitted } = typeKeys(this.line, keys);
    this.line = line;
    if (submitted.length === 0) return undefined;
    this.promptPending = true;
    // Lines after the first of a paste, or typed while a program ran, wait for whoever reads next.
    if (!atPrompt || submitted.length > 1) this.typeAhead = true;
    const first = submitted[0]!;
    return atPrompt && first.text.trim() !== '' ? first : undefined;
  }

  /** The shell reported its prompt. */
  prompt(): void {
    this.promptPending = false;
  }

  /** Follows the terminal's output for switches to and from the alternate screen. */
  output(chunk: Uint8Array): void {
    this.altScreen.push(chunk);
  }

  /** How many alternate-screen switches the output showed so far. */
  get altScreenSwitches(): number {
    return this.altScreen.switches;
  }

  /** Sets whether the alternate screen shows (from a screen snapshot, when a person attaches). */
  setAltScreen(on: boolean): void {
    this.altScreen.on = on;
  }

  /**
   * The verdict for an agent's command. `conchRuns`: conch's own foreground command runs; `look`: what a
   * look at the terminal found, when {@link needsLook} asked for one.
   */
  judge(conchRuns: boolean, look: TerminalLook | undefined): BusyVerdict {
    if (conchRuns) return { free: false, byPerson: false };
    if (this.personHolds) return { free: false, byPerson: true };
    if (look === undefined || look.shellHolds === undefined) return { free: true, byPerson: false };
    if (!look.shellHolds) return { free: false, byPerson: true };
    if (this.typeAhead) {
      // A shell blocked reading the terminal has read every line waiting in it (a terminal hands over
      // whole lines); otherwise it may still be running one of the person's.
      if (!readsInput(look.evidence)) return { free: false, byPerson: true };
      this.typeAhead = false;
    }
    return { free: true, byPerson: false };
  }

  /** What `Session.attached` says: how many watch, and whether a person holds the terminal. */
  attachedInfo(): { viewers: number; holds_terminal: boolean } | undefined {
    const holds = this.personHolds;
    return this.viewers > 0 || holds ? { viewers: this.viewers, holds_terminal: holds } : undefined;
  }
}
