/**
 * The driver interface: how the core reaches real terminals. Versioned (`specificationVersion: 1`) and
 * small, node-pty style: events are `onX(cb) → Disposable`. Local (node-pty) and SSH (ssh2) drivers
 * implement it and pass the conformance suite exported by `@conch/core/testing`.
 */

import type { SandboxRules } from './sandbox/rules.js';

/** Something that can be released; calling `dispose` twice is harmless. */
export interface Disposable {
  dispose(): void;
}

/** How a terminal process ended. `exitCode` null = unknown (never invented). */
export interface ExitInfo {
  exitCode: number | null;
  /** Signal name such as "SIGKILL" when a signal ended it. */
  signal: string | null;
  /** True when the connection carrying it went away (SSH), so the real outcome is unknown. */
  lost?: boolean;
}

/** What a kill of a whole process tree achieved. */
export interface KillReport {
  result: 'killed' | 'already_exited' | 'stop_unconfirmed';
  /** PIDs that were still alive after SIGKILL. */
  survivors: number[];
}

/**
 * Evidence about whether the terminal's foreground program is blocked reading the terminal.
 * `blocked_read`: kernel says it sleeps in a terminal read (certain). `polling`: it polls/selects
 * with the terminal among its fds (likely). `no`: it is doing something else. `unknown`: no evidence.
 */
export type InputWaitEvidence = 'blocked_read' | 'polling' | 'no' | 'unknown';

/**
 * An escaped process: a live process carrying an ended command's id (`CONCH_COMMAND_ID`) in its
 * environment, as its host's process facts show it; `list_processes` lists them as the command's
 * `escaped_pids`.
 */
export interface EscapedProcess {
  pid: number;
  /** Its state letter (`R` running, `S` sleeping, `D` disk wait, `T` stopped…). */
  state: string;
}

/** One scan of a host for what ended commands left running (see `TerminalProcess.escapedProcesses`). */
export interface EscapedScan {
  /** The live processes carrying `CONCH_COMMAND_ID=<id>` in their environment, by id (ids with none left out). */
  escaped: Map<string, EscapedProcess[]>;
  /**
   * The live children of the terminal's own process that still run its program (same command name): a
   * shell's subshells and its forks that have not executed a program yet. A session shell exports a
   * command's id after it started, so the host shows the id only in programs it executes: a job it has
   * just forked is invisible until it does.
   */
  forks: EscapedProcess[];
}

/** What {@link TerminalProcess.kill} kills: its whole tree, and the processes carrying either id. */
export interface TreeKillOptions {
  /** Sent first (a name such as `SIGTERM`). */
  signal: string;
  /** How long to wait after `signal` before SIGKILL. */
  graceMs: number;
  /** Also the processes carrying `CONCH_COMMAND_ID=commandId`, and their descendants. */
  commandId?: string;
  /** Also the processes carrying `CONCH_SESSION_ID=sessionId`, and their descendants. */
  sessionId?: string;
}

/** What {@link TerminalProcess.killJob} and {@link TerminalProcess.killEscaped} kill: one command's processes. */
export interface CommandKillOptions {
  /** Sent first (a name such as `SIGTERM`). */
  signal: string;
  /** How long to wait after `signal` before SIGKILL. */
  graceMs: number;
  /** The command whose processes (carrying `CONCH_COMMAND_ID=commandId`) are killed. */
  commandId: string;
}

/** A process running on a pseudo-terminal: a session shell or an isolated/background command. */
export interface TerminalProcess {
  /** OS process id on its host, when known. */
  readonly pid: number | undefined;
  /** Bytes from the terminal, in order. */
  onData(listener: (chunk: Uint8Array) => void): Disposable;
  /** Fires once, after every byte of output has been delivered through `onData`. */
  onExit(listener: (info: ExitInfo) => void): Disposable;
  /**
   * Writes to the terminal. Rejects with a `WRITE_TIMEOUT` ConchError when the terminal does not take
   * the bytes within `deadlineMs` (a program that stopped reading must not block the server).
   */
  write(data: string | Uint8Array, deadlineMs: number): Promise<void>;
  /** Changes the terminal size. A no-op after exit. */
  resize(cols: number, rows: number): void;
  /**
   * Sends a signal to the process group of the terminal's foreground job (like a keypress would).
   * Resolves once it is sent (on a remote host: once the host sent it); never rejects. A caller that goes
   * on typing awaits it, so that the signal cannot arrive in the middle of what it types next.
   */
  signal(signal: string): Promise<void>;
  /**
   * Kills the whole tree: the process group, every descendant, and escaped descendants carrying
   * `CONCH_COMMAND_ID=commandId` (or `CONCH_SESSION_ID=sessionId`) in their environment (when the host
   * can see them). Sends `signal`,
   * waits up to `graceMs`, then SIGKILL; reaps; reports survivors.
   */
  kill(options: TreeKillOptions): Promise<KillReport>;
  /**
   * Kills one foreground job of this shell without killing the shell: every process carrying
   * `CONCH_COMMAND_ID=commandId` and the terminal's foreground process group when it is not the shell's.
   * Absent where the host cannot find them; the core then sends Ctrl+C instead.
   */
  killJob?(options: CommandKillOptions): Promise<KillReport>;
  /**
   * Kills only the processes carrying `CONCH_COMMAND_ID=commandId` in their environment, and their
   * descendants: what a command left running after it ended (a `setsid` daemon, a `&` job). Never the
   * terminal's own process. Absent where the host cannot find processes by their environment.
   */
  killEscaped?(options: CommandKillOptions): Promise<KillReport>;
  /**
   * One scan of the host for what commands left running after they ended: the live processes carrying
   * `CONCH_COMMAND_ID=<id>` in their environment for each of `commandIds` (never the terminal's own
   * process), and the terminal's own forks, with their states (the core scans again until it settles).
   * Absent where the host cannot find processes by their environment.
   */
  escapedProcesses?(commandIds: readonly string[]): Promise<EscapedScan>;
  /** Name of the program in the terminal's foreground process group (e.g. "python3"), when known. */
  foregroundProgram?(): Promise<string | undefined>;
  /**
   * The names (command name, argv[0] and executable) of every process in the terminal's foreground process
   * group, whatever that group is (also the terminal's own first process after `exec`), when known.
   */
  foregroundPrograms?(): Promise<string[] | undefined>;
  /** Kernel evidence of a blocked terminal read (local hosts); absent or `unknown` elsewhere. */
  inputWaitEvidence?(): Promise<InputWaitEvidence>;
  /**
   * Whether the terminal's foreground process group is this process's own: for a session shell, true while
   * it runs no job in the foreground (at its prompt, or in a builtin), false while a program it started
   * holds the terminal. Undefined when the host cannot tell. One cheap look (a remote probe over SSH).
   */
  foregroundIsOwn?(): Promise<boolean | undefined>;
  /** Releases every resource (fds, channels). Kills the process if it still runs. */
  dispose(): void;
}

/**
 * How a driver runs a process inside an OS sandbox (docs/sandbox.md). A driver that cannot set the sandbox
 * up throws `SANDBOX_UNAVAILABLE`; it never runs the process unsandboxed.
 */
export interface SandboxLaunch {
  /** The rules (resolved: absolute paths). */
  rules: SandboxRules;
  /**
   * The directory of the session's private files (init script, environment snapshot, long commands):
   * usable inside, where the driver's other private files (other sessions') are not.
   */
  privateDir: string;
}

/** The shells conch knows how to integrate with. */
export type ShellKind = 'bash' | 'zsh' | 'sh';

/** Options for {@link Driver.openShell}. */
export interface OpenShellOptions {
  /** Shell program (path or name). */
  shell: string;
  /** Arguments (the init-script wiring chosen by the core's ShellIntegration). */
  args: string[];
  /** Starting directory; undefined = the driver's default (server cwd, or remote home). */
  cwd: string | undefined;
  /** Extra environment on top of the host's. */
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** Run the shell and everything it starts inside this sandbox. */
  sandbox?: SandboxLaunch;
}

/** Options for {@link Driver.spawn}: one isolated process on its own PTY and process group. */
export interface SpawnOptions {
  /** Program to run. */
  file: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** Run the process inside this sandbox (the one of the session it belongs to). */
  sandbox?: SandboxLaunch;
}

/**
 * Which driver a session lives on: `local` (this machine's PTYs), `ssh`, `container`, or the name of any
 * other driver. Open: a new driver names itself without editing the core.
 */
export type DriverKind = 'local' | 'ssh' | 'container' | (string & {});

/**
 * A host that can run terminals: the local machine, one SSH connection, one container.
 * `specificationVersion` changes whenever this interface changes incompatibly.
 */
export interface Driver {
  readonly specificationVersion: 1;
  readonly kind: DriverKind;
  /** Starts a long-lived interactive shell on a new PTY. */
  openShell(options: OpenShellOptions): Promise<TerminalProcess>;
  /** Starts one process on its own PTY, in its own session and process group. */
  spawn(options: SpawnOptions): Promise<TerminalProcess>;
  /**
   * Writes a private file on the host (mode 0600 in a 0700 directory owned by this driver) and returns
   * its absolute path. Used for shell init scripts and for commands too long or too odd to type.
   */
  writePrivateFile(name: string, content: string): Promise<string>;
  /** Removes a private file written by {@link writePrivateFile}; missing files are ignored. */
  removePrivateFile(path: string): Promise<void>;
  /** The host's default shell for a user (login shell) when none is given. */
  defaultShell(): Promise<string>;
  /** The path of the executable program `name` (a path, or a name looked up in PATH), or undefined. */
  findProgram?(name: string): Promise<string | undefined>;
  /** Releases the host (closes the connection, removes the private directory). */
  dispose(): Promise<void>;
  /** Fires when the host itself is gone (SSH connection lost). */
  onLost?(listener: (reason: string) => void): Disposable;
}

/**
 * Where a command's full text log is kept beyond the in-memory ring (a private spill file).
 * Lines are appended in order; line numbers are absolute (0-based).
 */
export interface SpillSink {
  /** Appends complete lines (without their newline). Stops storing silently past its cap. */
  appendLines(lines: readonly string[]): void;
  /** Number of lines stored (from line 0). Lines past this were not stored (cap reached). */
  readonly storedLines: number;
  /** Reads up to `count` stored lines starting at absolute line `from`. */
  readLines(from: number, count: number): string[];
  /** Path of the file, when there is one. */
  readonly path: string | undefined;
  /** Closes the file; `remove` also deletes it. */
  close(remove: boolean): void;
}

/** Creates one spill sink per command. */
export interface SpillStore {
  create(commandId: string): SpillSink;
}

/** The terminal screen as rendered by a real terminal emulator (docs/output.md `screen` view). */
export interface ScreenSnapshot {
  rows: string[];
  cursor: { row: number; col: number };
  alt_screen: boolean;
  cols: number;
  rows_count: number;
}

/** A terminal emulator fed with a terminal's bytes (implemented with @xterm/headless outside the core). */
export interface ScreenRenderer {
  write(chunk: Uint8Array): void;
  resize(cols: number, rows: number): void;
  /** Resolves once every byte written so far has been processed. */
  snapshot(): Promise<ScreenSnapshot>;
  dispose(): void;
}

/** Creates a screen renderer for a terminal of the given size. */
export type ScreenFactory = (cols: number, rows: number) => ScreenRenderer;
