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
  ExitInfo,
  SandboxLaunch,
  ScreenRenderer,
  ScreenSnapshot,
  ShellKind,
  TerminalProcess,
} from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import type { ShellMarker } from '../shell/marker-parser.js';
import { SCRIPT_PLACEHOLDER, type ShellIntegration, shellQuote } from '../shell/shell-integration.js';
import type { SessionInfo, SessionState } from '../types.js';
import type { Command } from './command.js';
import { TerminalStream } from './terminal-stream.js';

/** Everything a Session is created with (the manager builds it). */
export interface SessionInit {
  id: string;
  name: string;
  kind: 'local' | 'ssh';
  shell: string;
  shellKind: ShellKind;
  driver: Driver;
  integration: ShellIntegration;
  clock: Clock;
  cols: number;
  rows: number;
  screen: ScreenRenderer | undefined;
  envFile: string;
  /** Environment given to every process of this session (defaults + user env). */
  env: Record<string, string>;
  host?: string;
  port?: number;
  username?: string;
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
}

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
  readonly kind: 'local' | 'ssh';
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
  /** Isolated commands waiting for the pending snapshot (see {@link Session.snapshotWritten}). */
  private readonly snapshotWaiters = new Set<() => void>();

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
   * Resolves once the shell's environment snapshot is complete: at once when none is pending, else when
   * the shell reports it written, starts its next command or ends, or after `capMs` at the latest (an
   * isolated command then starts with the file as it is). Never rejects.
   */
  snapshotWritten(capMs: number): Promise<void> {
    if (!this.snapshotPending || !this.proc) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.clock.clearTimeout(timer);
        this.snapshotWaiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimeout(done, capMs);
      this.snapshotWaiters.add(done);
    });
  }

  private settleSnapshot(): void {
    this.snapshotPending = false;
    for (const done of [...this.snapshotWaiters]) done();
  }

  /** Types a foreground command into the shell. The session must be idle. */
  async run(command: Command, cwd: string | undefined): Promise<void> {
    if (!this.proc || this.state !== 'idle') throw new Error('session is not idle');
    this.state = 'busy';
    this.foreground = command;
    this.foregroundStarted = false;
    command.pid = this.proc.pid;
    this.touch();
    try {
      const encoded = this.integration.encodeForeground(command.id, command.text, cwd);
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
   * Watches the terminal as a person would see it, from now on: output with conch's shell-integration
   * markers removed and registered secrets masked. The line conch types to run a command (its wrapper,
   * echoed by the shell) is never shown: the viewer sees the command's own text instead, as if typed at
   * the prompt. `onClose` fires when the shell ends. Input goes through {@link Session.write}.
   */
  watch(watcher: TerminalWatcher): Disposable {
    this.watchers.add(watcher);
    return { dispose: () => this.watchers.delete(watcher) };
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
      if (piece.type === 'data') this.watchData(piece.bytes);
      if (piece.type === 'marker') this.onMarker(piece.marker);
      else if (this.foreground && this.foregroundStarted) this.foreground.appendOutput(piece.bytes);
      else if (this.readyResolve && this.startupOutput.length < 4096) {
        this.startupOutput += new TextDecoder().decode(piece.bytes);
      }
    }
  }

  private onMarker(marker: ShellMarker): void {
    // Every end the shell reports is followed by an environment snapshot; the shell is past it once it
    // says so or starts another command.
    if (marker.type === 'snapshot') {
      this.settleSnapshot();
      return;
    }
    if (marker.type === 'end') this.snapshotPending = true;
    else if (this.snapshotPending) this.settleSnapshot();
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
      // Viewers see the command's own text where the shell echoed conch's wrapper line.
      if (this.watchers.size > 0)
        this.tellWatchers(new TextEncoder().encode(`${fg.text.replace(/\r?\n/g, '\r\n')}\r\n`));
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
    if (fg && !info.lost && !fg.killRequested) fg.sessionEnded = true;
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
    if (this.sandbox !== undefined) info.sandbox = structuredClone(this.sandbox.rules);
    if (this.proc?.pid !== undefined) info.pid = this.proc.pid;
    if (this.foreground) info.foreground_command_id = this.foreground.id;
    return info;
  }
}
