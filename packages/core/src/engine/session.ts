/**
 * A session: one long-lived shell on a pseudo-terminal whose state (cwd, exported variables, functions,
 * venvs) persists between commands. It types foreground commands into the shell and learns of their
 * start, exit status and cwd from the shell-integration markers.
 */

import type { Clock } from '../clock.js';
import { markPhase } from '../diagnostics/phase-trace.js';
import type {
  Disposable,
  Driver,
  DriverKind,
  ExitInfo,
  InputWaitEvidence,
  SandboxLaunch,
  ScreenRenderer,
  ScreenSnapshot,
  ShellKind,
  TerminalProcess,
} from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import type { SubmittedLine } from '../input/person-line.js';
import type { ShellMarker } from '../shell/marker-parser.js';
import {
  SCRIPT_PLACEHOLDER,
  type ShellIntegration,
  shellQuote,
  snapshotFile,
} from '../shell/shell-integration.js';
import type { SessionInfo, SessionState } from '../types.js';
import type { Command } from './command.js';
import { type BusyVerdict, readsInput, TerminalBusy, type TerminalLook } from './terminal-busy.js';
import { TerminalStream } from './terminal-stream.js';

/** Everything a Session is created with (the manager builds it). */
export interface SessionInit {
  id: string;
  name: string;
  kind: DriverKind;
  shell: string;
  shellKind: ShellKind;
  driver: Driver;
  integration: ShellIntegration;
  clock: Clock;
  cols: number;
  rows: number;
  screen: ScreenRenderer | undefined;
  /** Snapshot slot 0, which the shell writes at start-up (see {@link snapshotFile}). */
  envFile: string;
  /** Environment given to every process of this session (defaults + user env). */
  env: Record<string, string>;
  host?: string;
  port?: number;
  username?: string;
  container?: string;
  image?: string;
  /** The OS sandbox every process of this session runs in (fixed for the session's life). */
  sandbox?: SandboxLaunch;
  writeDeadlineMs: number;
}

/** A live viewer of a session's terminal (see {@link Session.watch}). */
export interface TerminalWatcher {
  /** Bytes as the terminal prints them: conch's markers removed, its typed command lines replaced, secrets masked. */
  onOutput(bytes: Uint8Array): void;
  /** The shell ended (closed or lost). */
  onClose?(): void;
  /** An agent's command starts: typed into this terminal, or run isolated in its own. */
  onCommand?(command: AgentCommandStart): void;
}

/** What a viewer is told when an agent's command starts (see {@link TerminalWatcher.onCommand}). */
export interface AgentCommandStart {
  command_id: string;
  text: string;
  /** True when it runs in its own terminal, not in this one (background, or the shell was busy). */
  isolated: boolean;
  background: boolean;
  /** True when it runs isolated because a person holds this terminal. */
  held_by_person: boolean;
}

/**
 * The shell's turn for an agent's typed command (see {@link Session.takeTurn}): the verdict, and the
 * release of the person's keystrokes held back meanwhile.
 */
export interface ShellTurn extends BusyVerdict {
  release(): void;
}

/** Extra looks at a shell not yet seen reading after its prompt marker, and the time between them. */
const LOOK_RETRIES = 10;
const LOOK_RETRY_MS = 50;

/** Signal names by number (Linux), for statuses above 128. */
export const SIGNAL_NAMES: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  5: 'SIGTRAP',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  10: 'SIGUSR1',
  11: 'SIGSEGV',
  12: 'SIGUSR2',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
  17: 'SIGCHLD',
  18: 'SIGCONT',
  19: 'SIGSTOP',
  20: 'SIGTSTP',
  21: 'SIGTTIN',
  22: 'SIGTTOU',
  24: 'SIGXCPU',
  25: 'SIGXFSZ',
  26: 'SIGVTALRM',
  27: 'SIGPROF',
  28: 'SIGWINCH',
  29: 'SIGIO',
  31: 'SIGSYS',
};

/** The signal a shell exit status above 128 stands for, else null. */
export function signalFromStatus(status: number | null): string | null {
  if (status === null || status <= 128 || status > 128 + 64) return null;
  return SIGNAL_NAMES[status - 128] ?? `SIG${status - 128}`;
}

/** One session shell (see the module doc). */
export class Session {
  readonly id: string;
  readonly name: string;
  readonly kind: DriverKind;
  readonly shell: string;
  readonly shellKind: ShellKind;
  readonly driver: Driver;
  readonly integration: ShellIntegration;
  readonly envFile: string;
  readonly env: Record<string, string>;
  readonly createdIso: string;
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly username: string | undefined;
  /** The container (name) and image of a container session. */
  readonly container: string | undefined;
  readonly image: string | undefined;
  /** The OS sandbox every process of this session runs in; never changes. */
  readonly sandbox: SandboxLaunch | undefined;
  cols: number;
  rows: number;
  state: SessionState = 'busy';
  cwd: string | null = null;
  lastActivityIso: string;
  /** The command typed into the shell and not yet ended. */
  foreground: Command | undefined;
  /**
   * Set on a default session recreated after its shell exited, until its first command has said so
   * (`new_shell: true`).
   */
  newShellNotice = false;
  /** Every command of this session that has not been pruned, oldest first. */
  readonly commandIds: string[] = [];
  proc: TerminalProcess | undefined;
  private readonly clock: Clock;
  private readonly screen: ScreenRenderer | undefined;
  private readonly stream: TerminalStream;
  private readonly writeDeadlineMs: number;
  private foregroundStarted = false;
  private foregroundScript: string | undefined;
  private subscriptions: Disposable[] = [];
  private readyResolve: (() => void) | undefined;
  private readyReject: ((e: unknown) => void) | undefined;
  private startupOutput = '';
  /** Live viewers of the terminal (`watch`). */
  private readonly watchers = new Set<TerminalWatcher>();
  /**
   * True from a command's end marker until the shell says the environment snapshot that follows it is
   * written (`D`), or moves on to its next command, or ends.
   */
  private snapshotPending = false;
  /** The snapshot slot holding the last whole snapshot: the file isolated commands load. */
  private snapshotLatest = 0;
  /** Snapshot slots the shell has been given so far (0 to this - 1). */
  private snapshotSlots = 1;
  /** The slot typed with the latest foreground command: its snapshot goes there. */
  private typedSlot: { commandId: string; slot: number } | undefined;
  /** The slot the pending snapshot is written to, when known. */
  private writingSlot: number | undefined;
  /** Isolated commands still loading each slot (see {@link Session.leaseSnapshot}). */
  private readonly snapshotReaders = new Map<number, number>();
  /** The conditions waited for (see {@link Session.until}). */
  private readonly waits = new Set<() => void>();
  /** Who besides conch holds the terminal: people attached, their typed line, the shell's prompts. */
  readonly sharing = new TerminalBusy();
  /** A person's keystrokes and agents' typed lines, in the order they reach the terminal. */
  private typingQueue: Promise<unknown> = Promise.resolve();
  private readonly keyDecoder = new TextDecoder();

  constructor(init: SessionInit) {
    this.id = init.id;
    this.name = init.name;
    this.kind = init.kind;
    this.shell = init.shell;
    this.shellKind = init.shellKind;
    this.driver = init.driver;
    this.integration = init.integration;
    this.clock = init.clock;
    this.cols = init.cols;
    this.rows = init.rows;
    this.screen = init.screen;
    this.envFile = init.envFile;
    this.env = init.env;
    this.host = init.host;
    this.port = init.port;
    this.username = init.username;
    this.container = init.container;
    this.image = init.image;
    this.sandbox = init.sandbox;
    this.writeDeadlineMs = init.writeDeadlineMs;
    this.createdIso = init.clock.isoNow();
    this.lastActivityIso = this.createdIso;
    this.stream = new TerminalStream(init.integration.nonce, init.screen);
  }

  /**
   * Attaches the started shell and resolves when it reports ready (its init ran), or rejects when it
   * exits first or `timeoutMs` passes.
   */
  attach(proc: TerminalProcess, timeoutMs: number): Promise<void> {
    this.proc = proc;
    const ready = new Promise<void>((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.subscriptions.push(
      proc.onData((chunk) => this.onData(chunk)),
      proc.onExit((info) => this.onExit(info)),
    );
    const timer = this.clock.setTimeout(() => {
      this.failReady(
        new ConchError(ErrorCode.INTERNAL, `The shell ${this.shell} did not start within ${timeoutMs} ms.`, {
          hint: 'Check that the shell exists and that its rc files do not block (e.g. waiting for input).',
          data: { output: this.startupOutput.slice(-500) },
        }),
      );
    }, timeoutMs);
    return ready.finally(() => this.clock.clearTimeout(timer));
  }

  private failReady(error: unknown): void {
    const reject = this.readyReject;
    this.readyResolve = undefined;
    this.readyReject = undefined;
    reject?.(error);
  }

  /** True while the shell can take a typed command. */
  get idle(): boolean {
    return this.state === 'idle';
  }

  /**
   * Resolves once `done()` holds, checked now, after every marker and when the shell ends, or after
   * `capMs` at the latest. Never rejects.
   */
  private until(done: () => boolean, capMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        this.clock.clearTimeout(timer);
        this.waits.delete(check);
        resolve();
      };
      const check = (): void => {
        if (done()) finish();
      };
      const timer = this.clock.setTimeout(finish, capMs);
      this.waits.add(check);
    });
  }

  /** Checks every condition waited for (see {@link Session.until}). */
  private wake(): void {
    for (const check of [...this.waits]) check();
  }

  /**
   * Resolves once the shell's environment snapshot is complete: at once when none is pending, else when
   * the shell reports it written, starts its next command or ends, or after `capMs` at the latest (an
   * isolated command then starts with the last snapshot that was written whole). Never rejects.
   */
  snapshotWritten(capMs: number): Promise<void> {
    return this.until(() => !this.snapshotPending || !this.proc, capMs);
  }

  /**
   * Resolves once the shell has read the line of `command` (its start marker), or it is no longer the
   * foreground command, or the shell ended, or after `capMs` at the latest. Never rejects. Keys meant for
   * the command wait for this: before it, they would reach the shell's own line reader, and a Ctrl+C there
   * makes the terminal throw the typed line away, so that the command never starts (nor ends).
   */
  lineRead(command: Command, capMs: number): Promise<void> {
    return this.until(() => this.foreground !== command || this.foregroundStarted || !this.proc, capMs);
  }

  /**
   * The file of the last snapshot written whole, for an isolated command to load: the shell is given
   * another slot to write until `release` (call it once the command has loaded the file, at its start
   * marker, or when it ends or fails to start). The shell never rewrites the file an isolated command
   * reads, so the command sees one snapshot whole, never the start of a new one and the rest of an old one.
   */
  leaseSnapshot(): { file: string; release: () => void } {
    const slot = this.snapshotLatest;
    this.snapshotReaders.set(slot, (this.snapshotReaders.get(slot) ?? 0) + 1);
    let held = true;
    return {
      file: snapshotFile(this.envFile, slot),
      release: () => {
        if (!held) return;
        held = false;
        const left = (this.snapshotReaders.get(slot) ?? 1) - 1;
        if (left > 0) this.snapshotReaders.set(slot, left);
        else this.snapshotReaders.delete(slot);
      },
    };
  }

  /** Every snapshot slot's file the shell may have written (to remove when the session ends). */
  snapshotFiles(): string[] {
    return Array.from({ length: this.snapshotSlots }, (_, slot) => snapshotFile(this.envFile, slot));
  }

  /**
   * The slot for the next command's snapshot: not the last whole snapshot (an isolated command may be given
   * it at any moment, and conch learns that the shell has begun rewriting a slot only after the fact), not
   * the one a pending snapshot is written to (it becomes the last whole one), not one an isolated command
   * is loading. A new slot when all are taken.
   */
  private freeSnapshotSlot(): number {
    for (let slot = 0; slot < this.snapshotSlots; slot++) {
      const taken =
        slot === this.snapshotLatest || slot === this.writingSlot || this.snapshotReaders.has(slot);
      if (!taken) return slot;
    }
    return this.snapshotSlots++;
  }

  private settleSnapshot(): void {
    this.snapshotPending = false;
    this.writingSlot = undefined;
    this.wake();
  }

  /** Types a foreground command into the shell. The session must be idle. */
  async run(command: Command, cwd: string | undefined): Promise<void> {
    if (!this.proc || this.state !== 'idle') throw new Error('session is not idle');
    this.state = 'busy';
    this.foreground = command;
    this.foregroundStarted = false;
    command.markTyped(this.proc.pid);
    this.touch();
    try {
      const slot = this.freeSnapshotSlot();
      this.typedSlot = { commandId: command.id, slot };
      const encoded = this.integration.encodeForeground(command.id, command.text, cwd, slot);
      let line = encoded.line;
      if (encoded.script !== undefined) {
        this.foregroundScript = await this.driver.writePrivateFile(
          `${this.id}/${command.id}.sh`,
          encoded.script,
        );
        line = line.replace(SCRIPT_PLACEHOLDER, shellQuote(this.foregroundScript));
      }
      // A newline, not a carriage return: the shell reads the line without a line editor (see
      // shell-integration.ts), and a program that exits leaving the terminal raw (no CR-to-NL mapping) must
      // not leave the next command unsubmitted.
      markPhase('typed');
      await this.proc.write(`${line}\n`, this.writeDeadlineMs);
    } catch (error) {
      if (this.foreground === command) {
        this.foreground = undefined;
        this.state = this.proc ? 'idle' : this.state;
      }
      command.end({ state: 'lost', exitCode: null, signal: null });
      this.wake();
      throw error;
    }
  }

  /** Writes input to the shell's terminal (for the foreground command). */
  write(data: string | Uint8Array): Promise<void> {
    if (!this.proc)
      return Promise.reject(new ConchError(ErrorCode.SESSION_CLOSED, `Session ${this.id} is closed.`));
    this.touch();
    return this.proc.write(data, this.writeDeadlineMs);
  }

  /**
   * Takes the shell's turn for an agent's typed command: waits until a person's keystrokes already relayed
   * are written, holds later ones back, and judges whether the shell is free (terminal-busy.ts; a look at
   * the terminal only when a person could have changed it). Call `release` once the command's line is
   * typed, or at once when it runs isolated instead. Never rejects.
   */
  async takeTurn(): Promise<ShellTurn> {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = this.typingQueue;
    this.typingQueue = before.then(() => gate);
    await before;
    const conchRuns = !this.idle;
    let look: TerminalLook | undefined;
    if (!conchRuns && !this.sharing.personHolds && this.sharing.needsLook) look = await this.look();
    return { ...this.sharing.judge(!this.idle, look), release };
  }

  /**
   * One look at who holds the terminal (undefined when the host cannot tell or the look fails). When the
   * shell must also be seen waiting for input (type-ahead), a shell still on its way from its prompt marker
   * to its read is given a few more looks, {@link LOOK_RETRY_MS} apart.
   */
  private async look(): Promise<TerminalLook | undefined> {
    const proc = this.proc;
    for (let attempt = 0; ; attempt++) {
      const shellHolds = await proc?.foregroundIsOwn?.().catch(() => undefined);
      if (shellHolds === undefined) return undefined;
      if (!shellHolds || !this.sharing.needsEvidence) return { shellHolds };
      const evidence = (await proc?.inputWaitEvidence?.().catch(() => 'unknown' as const)) ?? 'unknown';
      if (readsInput(evidence) || attempt >= LOOK_RETRIES) return { shellHolds, evidence };
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, LOOK_RETRY_MS));
    }
  }

  /**
   * Types a person's keystrokes (`conch attach`) into the terminal, in order with the agent's typed lines
   * (never in the middle of one), and follows them (terminal-busy.ts). Resolves with the line the person
   * submitted at the shell's prompt, if these keys did.
   */
  personWrite(data: Uint8Array): Promise<SubmittedLine | undefined> {
    const written = this.typingQueue.then(async () => {
      const keys = this.keyDecoder.decode(data, { stream: true });
      const submitted = this.sharing.typed(keys, this.foreground !== undefined);
      await this.write(data);
      return submitted;
    });
    this.typingQueue = written.catch(() => {});
    return written;
  }

  /**
   * Watches the terminal as a person would see it, from now on: output with conch's shell-integration
   * markers removed and registered secrets masked. The line conch types to run a command (its wrapper,
   * echoed by the shell) is never shown: the viewer sees the command's own text instead, as if typed at
   * the prompt, and hears of each agent command as it starts (`onCommand`). `onClose` fires when the shell
   * ends. `person`: the viewer is a person (counted in `attached`), who types (`input`) through
   * {@link Session.personWrite}.
   */
  watch(watcher: TerminalWatcher, person?: { input: boolean }): Disposable {
    this.watchers.add(watcher);
    if (person) {
      this.sharing.viewers++;
      if (person.input) {
        this.sharing.typists++;
        // Keys typed into a full-screen program are its own: start from what the screen shows now.
        const seen = this.sharing.altScreenSwitches;
        void this.screen?.snapshot().then(
          (snapshot) => {
            if (this.sharing.altScreenSwitches === seen) this.sharing.setAltScreen(snapshot.alt_screen);
          },
          () => {},
        );
      }
    }
    let watching = true;
    return {
      dispose: () => {
        if (!watching) return;
        watching = false;
        this.watchers.delete(watcher);
        if (!person) return;
        this.sharing.viewers--;
        if (person.input) this.sharing.typists--;
      },
    };
  }

  /** Tells viewers that an agent's command starts (an isolated one; typed ones are told at their start). */
  announce(command: Command, heldByPerson: boolean): void {
    this.tellCommand({
      command_id: command.id,
      text: command.text,
      isolated: command.isolated,
      background: command.background,
      held_by_person: heldByPerson,
    });
  }

  private tellCommand(start: AgentCommandStart): void {
    for (const watcher of this.watchers) {
      try {
        watcher.onCommand?.(start);
      } catch {
        // a failing viewer must not disturb the session
      }
    }
  }

  /**
   * The input-wait evidence for the foreground command `command`. While its typed line has not started,
   * it is never waiting for input (the shell has not run it): instead, when whoever holds the terminal is
   * seen waiting for input twice in a row with the line still not started, that reader took the line
   * (the shell would have started it at once), and the command ends saying so ({@link SWALLOWED_NOTE}).
   */
  async foregroundInputWait(command: Command): Promise<InputWaitEvidence> {
    const proc = this.proc;
    if (!command.awaitingStart) return (await proc?.inputWaitEvidence?.()) ?? 'unknown';
    const shellHolds = await proc?.foregroundIsOwn?.().catch(() => undefined);
    const evidence = await proc?.inputWaitEvidence?.().catch(() => 'unknown' as const);
    if (!command.awaitingStart || command.ended || this.foreground !== command) return 'no';
    if (shellHolds === undefined || !readsInput(evidence)) {
      command.clearSwallowSuspicion();
      return 'no';
    }
    // Look once more before deciding: a start marker may still be on its way (a remote host).
    if (!command.suspectSwallowed()) return 'no';
    this.abandonUnstarted(command, 'swallowed');
    return 'no';
  }

  /**
   * Ends the foreground command whose typed line never started: `swallowed` (a program holding the
   * terminal read it) or `killed` (kill_process before it started: nothing of the person's is signalled).
   */
  abandonUnstarted(command: Command, how: 'swallowed' | 'killed'): void {
    if (this.foreground !== command || !command.awaitingStart) return;
    this.finishForeground();
    if (this.state === 'busy' && this.proc) this.state = 'idle';
    if (how === 'swallowed') command.endSwallowed();
    else command.end({ state: 'killed', exitCode: null, signal: null });
  }

  /** Masks a secret in this terminal's output until the foreground command ends. */
  addSecret(secret: string): void {
    this.stream.redactor.add(secret);
  }

  /** The rendered screen of the session's terminal. */
  async screenSnapshot(): Promise<ScreenSnapshot | undefined> {
    return this.screen?.snapshot();
  }

  /** Resizes the terminal. */
  resize(cols: number, rows: number): void {
    this.cols = cols;
    this.rows = rows;
    this.proc?.resize(cols, rows);
    this.screen?.resize(cols, rows);
  }

  private tellWatchers(bytes: Uint8Array): void {
    for (const watcher of this.watchers) {
      try {
        watcher.onOutput(bytes);
      } catch {
        // a failing viewer must not disturb the session
      }
    }
  }

  /**
   * What viewers see of a data piece: nothing while conch's typed line of the foreground command echoes
   * (between typing it and its start marker), the bytes otherwise.
   */
  private watchData(bytes: Uint8Array): void {
    if (this.watchers.size === 0 || (this.foreground && !this.foregroundStarted)) return;
    this.tellWatchers(bytes);
  }

  private touch(): void {
    this.lastActivityIso = this.clock.isoNow();
  }

  private onData(chunk: Uint8Array): void {
    for (const piece of this.stream.push(chunk)) {
      if (piece.type === 'data') {
        this.watchData(piece.bytes);
        if (this.sharing.typists > 0) this.sharing.output(piece.bytes);
      }
      if (piece.type === 'marker') this.onMarker(piece.marker);
      else if (this.foreground && this.foregroundStarted) this.foreground.appendOutput(piece.bytes);
      else if (this.readyResolve && this.startupOutput.length < 4096) {
        this.startupOutput += new TextDecoder().decode(piece.bytes);
      }
    }
  }

  private onMarker(marker: ShellMarker): void {
    if (marker.type === 'prompt') {
      this.sharing.prompt();
      this.wake();
      return;
    }
    this.readMarker(marker);
    this.wake();
  }

  private readMarker(marker: Exclude<ShellMarker, { type: 'prompt' }>): void {
    // Every end the shell reports is followed by an environment snapshot; the shell is past it once it
    // says so or starts another command. Only a snapshot it says it wrote whole is given to isolated
    // commands.
    if (marker.type === 'snapshot') {
      if (marker.written && this.snapshotPending && this.writingSlot !== undefined)
        this.snapshotLatest = this.writingSlot;
      this.settleSnapshot();
      return;
    }
    if (marker.type === 'end') {
      this.snapshotPending = true;
      this.writingSlot = this.typedSlot?.commandId === marker.commandId ? this.typedSlot.slot : undefined;
    } else if (this.snapshotPending) this.settleSnapshot();
    this.touch();
    if (marker.type === 'ready') {
      this.cwd = marker.cwd;
      this.state = 'idle';
      const resolve = this.readyResolve;
      this.readyResolve = undefined;
      this.readyReject = undefined;
      resolve?.();
      return;
    }
    const fg = this.foreground;
    if (!fg || marker.commandId !== fg.id) return;
    if (marker.type === 'start') {
      this.foregroundStarted = true;
      fg.markStarted();
      // Viewers see the command's own text where the shell echoed conch's wrapper line.
      if (this.watchers.size > 0) {
        this.tellCommand({
          command_id: fg.id,
          text: fg.text,
          isolated: false,
          background: false,
          held_by_person: false,
        });
        this.tellWatchers(new TextEncoder().encode(`${fg.text.replace(/\r?\n/g, '\r\n')}\r\n`));
      }
      return;
    }
    markPhase('shell_done');
    this.cwd = marker.cwd;
    this.finishForeground();
    fg.end({
      state: 'exited',
      exitCode: marker.status,
      signal: signalFromStatus(marker.status),
      cwd: marker.cwd,
    });
    if (this.state === 'busy') this.state = 'idle';
  }

  private finishForeground(): void {
    this.foreground = undefined;
    this.foregroundStarted = false;
    for (const piece of this.stream.flush()) {
      if (piece.type === 'marker') this.onMarker(piece.marker);
    }
    if (this.foregroundScript !== undefined) {
      void this.driver.removePrivateFile(this.foregroundScript).catch(() => {});
      this.foregroundScript = undefined;
    }
  }

  private onExit(info: ExitInfo): void {
    for (const piece of this.stream.flush()) {
      if (piece.type === 'data') this.watchData(piece.bytes);
      if (piece.type === 'marker') this.onMarker(piece.marker);
      else if (this.foreground && this.foregroundStarted) this.foreground.appendOutput(piece.bytes);
    }
    for (const watcher of [...this.watchers]) {
      try {
        watcher.onClose?.();
      } catch {
        // a failing viewer must not disturb the session
      }
    }
    this.watchers.clear();
    this.settleSnapshot();
    const fg = this.foreground;
    this.state = info.lost ? 'lost' : 'closed';
    this.finishForeground();
    // The shell itself ended under its foreground command (`exit 3`, `set -e; false`), not by a kill.
    if (fg && !info.lost && !fg.killRequested) fg.markSessionEnded();
    fg?.end({
      state: info.lost ? 'lost' : 'exited',
      exitCode: info.lost ? null : info.exitCode,
      signal: info.signal,
    });
    this.failReady(
      new ConchError(
        ErrorCode.INTERNAL,
        `The shell ${this.shell} exited during start-up (code ${info.exitCode}).`,
        {
          data: { output: this.startupOutput.slice(-500) },
        },
      ),
    );
    this.release();
    this.wake();
  }

  private release(): void {
    for (const s of this.subscriptions) s.dispose();
    this.subscriptions = [];
    this.proc?.dispose();
    this.proc = undefined;
    this.screen?.dispose();
  }

  /** Ends the session: kills the shell and everything in its terminal. Idempotent. */
  async close(graceMs: number): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    try {
      await proc.kill({ signal: 'SIGHUP', graceMs, sessionId: this.id });
    } finally {
      if (this.proc) this.onExit({ exitCode: null, signal: 'SIGHUP' });
      this.state = 'closed';
    }
  }

  /** The `Session` shape of docs/tools.md. */
  toInfo(): SessionInfo {
    const info: SessionInfo = {
      session_id: this.id,
      kind: this.kind,
      name: this.name,
      state: this.state,
      cwd: this.cwd,
      shell: this.shell,
      created_at: this.createdIso,
      last_activity_at: this.lastActivityIso,
      command_ids: [...this.commandIds],
    };
    if (this.host !== undefined) info.host = this.host;
    if (this.port !== undefined) info.port = this.port;
    if (this.username !== undefined) info.username = this.username;
    if (this.container !== undefined) info.container = this.container;
    if (this.image !== undefined) info.image = this.image;
    if (this.sandbox !== undefined) info.sandbox = structuredClone(this.sandbox.rules);
    if (this.proc?.pid !== undefined) info.pid = this.proc.pid;
    if (this.foreground) info.foreground_command_id = this.foreground.id;
    const attached = this.sharing.attachedInfo();
    if (attached) {
      info.attached = attached;
      if (attached.holds_terminal && info.state === 'idle') info.state = 'busy';
    }
    return info;
  }
}
