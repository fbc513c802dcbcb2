/**
 * A real, in-memory implementation of the Driver interface for tests of the core and of faces: a
 * scriptable "shell" that speaks the shell-integration protocol (it reads the nonce from the init script
 * the engine writes, decodes the line the engine types, and answers with start/end markers). It is not a
 * mock of conch code: it is a small shell whose commands the test scripts.
 */

import type { Clock } from '../clock.js';
import type {
  Driver,
  ExitInfo,
  InputWaitEvidence,
  KillReport,
  OpenShellOptions,
  SpawnOptions,
  TerminalProcess,
} from '../driver.js';
import { SIGNAL_NAMES } from '../engine/session.js';
import { ISOLATED_NONCE_ENV, MARKER_OSC } from '../shell/shell-integration.js';
import { TerminalProcessBase } from '../terminal-process-base.js';

/** What a scripted command can do. */
export interface FakeCommandContext {
  /** The command text as typed by the caller (without conch's wrapping). */
  readonly text: string;
  /** The fake shell's cwd when the command started. */
  readonly cwd: string;
  readonly clock: Clock;
  /** True when it runs isolated (its own fake process). */
  readonly isolated: boolean;
  /** Prints output (string or bytes). */
  print(data: string | Uint8Array): void;
  /** Ends the command with a status (and, in the session shell, a new cwd). */
  exit(status: number, cwd?: string): void;
  /** Receives what is typed into the terminal while the command runs. */
  onInput(listener: (data: string) => void): void;
  /**
   * Receives the signals sent to the command while it runs (`killJob`'s and `signal`'s). Without a listener
   * a command ends when its job is killed, as a real program would, and ignores `signal`.
   */
  onSignal(listener: (signal: string) => void): void;
  /** Sets what `inputWaitEvidence` reports while the command runs. */
  setInputWait(evidence: InputWaitEvidence): void;
  /** Ends the whole shell (like `exit` in a real shell). */
  exitShell(status: number): void;
  /** True when a person typed it at the prompt (it runs as their program, holding the terminal). */
  readonly byPerson: boolean;
}

/** A scripted command: called when the command starts. */
export type FakeCommand = (ctx: FakeCommandContext) => void;

/** Options of {@link FakeDriver}. */
export interface FakeDriverOptions {
  clock: Clock;
  /** Scripted commands by exact text; checked before the built-ins. */
  commands?: Record<string, FakeCommand>;
  /** Fallback for text no script or built-in knows: prints an error, status 127. */
  kind?: 'local' | 'ssh';
}

const encoder = new TextEncoder();

/** Decodes the `$'…'` string conch types (the inverse of `ansiCQuote`). */
export function decodeAnsiC(quoted: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < quoted.length; i++) {
    const ch = quoted[i]!;
    if (ch === '\\') {
      const next = quoted[i + 1];
      if (next === 'n') {
        bytes.push(10);
        i++;
      } else if (next === 'x') {
        bytes.push(Number.parseInt(quoted.slice(i + 2, i + 4), 16));
        i += 3;
      } else {
        bytes.push(next!.charCodeAt(0));
        i++;
      }
    } else bytes.push(ch.charCodeAt(0));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** Strips conch's `{ … \n}` group (and an optional leading `cd -- 'DIR' && `). */
function unwrap(body: string): { text: string; cd?: string } {
  let cd: string | undefined;
  let rest = body;
  const m = /^cd -- '((?:[^']|'\\'')*)' && /.exec(rest);
  if (m) {
    cd = m[1]!.replace(/'\\''/g, "'");
    rest = rest.slice(m[0].length);
  }
  if (rest.startsWith('{ ') && rest.endsWith('\n}')) rest = rest.slice(2, -2);
  return cd === undefined ? { text: rest } : { text: rest, cd };
}

class FakeProcess extends TerminalProcessBase {
  readonly pid: number;
  private inputListener: ((data: string) => void) | undefined;
  evidence: InputWaitEvidence = 'no';
  written: string[] = [];
  /** Called with each write when no command is running (the shell's line editor). */
  lineHandler: ((data: string) => void) | undefined;
  killed: string[] = [];
  /** How long `signal` takes to arrive on the fake clock (ms), as over a remote host's round trip. */
  signalDelayMs = 0;
  /** How long what the shell prints takes to reach conch on the fake clock (ms), as under load. */
  outputDelayMs = 0;
  /** The running command's signal listener (see {@link FakeCommandContext.onSignal}). */
  signalListener: ((signal: string) => void) | undefined;
  /** The running command's end, for a job kill without a signal listener. */
  jobEnd: ((signal: string) => void) | undefined;
  /** When true, writes are never taken: they time out at their deadline on the fake clock. */
  stuckWrites = false;
  foreground: string | undefined;
  /** What `foregroundIsOwn` reports (false while a program started from the prompt holds the terminal). */
  ownGroup: boolean | undefined = true;
  /**
   * When true, the session shell holds back the marker saying its environment snapshot is written (as a
   * shell whose snapshot is slow or stuck would) until {@link FakeProcess.releaseSnapshot}.
   */
  holdSnapshot = false;
  private heldSnapshot: string | undefined;
  /** The status the session shell's snapshots report (0: written whole; else: it could not be). */
  snapshotStatus = 0;
  /**
   * When true, the session shell reads nothing typed (as a shell still busy before its prompt would)
   * until {@link FakeProcess.releaseLines}.
   */
  holdLines = false;
  private heldLines: string[] = [];
  /** The arguments an isolated command's process was started with. */
  args: string[] = [];

  constructor(pid: number, clock: Clock) {
    super(clock);
    this.pid = pid;
  }

  emit(data: string | Uint8Array): void {
    if (this.hasExited) return;
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    if (this.outputDelayMs > 0) {
      this.clock.setTimeout(() => {
        if (!this.hasExited) this.deliver(bytes);
      }, this.outputDelayMs);
    } else this.deliver(bytes);
  }

  /** The session shell's environment snapshot after a command's end: said written now, or held back. */
  snapshot(marker: string): void {
    if (this.holdSnapshot) this.heldSnapshot = marker;
    else this.emit(marker);
  }

  /** Says the held-back snapshot is written (see {@link FakeProcess.holdSnapshot}). */
  releaseSnapshot(): void {
    this.holdSnapshot = false;
    const held = this.heldSnapshot;
    this.heldSnapshot = undefined;
    if (held !== undefined) this.emit(held);
  }

  /** Lets the session shell read what was typed meanwhile (see {@link FakeProcess.holdLines}). */
  releaseLines(): void {
    this.holdLines = false;
    for (const text of this.heldLines.splice(0)) this.lineHandler?.(text);
  }

  finish(info: ExitInfo): void {
    this.deliverExit(info);
  }

  setInputListener(listener: ((data: string) => void) | undefined): void {
    this.inputListener = listener;
  }

  protected override writeBytes(bytes: Uint8Array, deadlineMs: number): Promise<void> {
    if (this.stuckWrites) return this.withWriteDeadline(deadlineMs, () => () => {});
    const text = new TextDecoder().decode(bytes);
    this.written.push(text);
    if (this.inputListener) this.inputListener(text);
    else if (this.holdLines) {
      // Ctrl+C makes a terminal drop what it holds for its reader.
      if (text.includes('\x03')) this.heldLines.length = 0;
      else this.heldLines.push(text);
    } else this.lineHandler?.(text);
    return Promise.resolve();
  }

  override resize(): void {}

  override async signal(signal: string): Promise<void> {
    if (this.signalDelayMs > 0) {
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, this.signalDelayMs));
    }
    this.killed.push(signal);
    this.signalListener?.(signal);
  }

  /** Kills the running command's job (not the shell): its signal listener decides, else it ends. */
  async killJob(options: { signal: string }): Promise<KillReport> {
    this.killed.push(options.signal);
    if (this.signalListener) this.signalListener(options.signal);
    else this.jobEnd?.(options.signal);
    return { result: 'killed', survivors: [] };
  }

  override async kill(options: { signal: string }): Promise<KillReport> {
    if (this.hasExited) return { result: 'already_exited', survivors: [] };
    this.killed.push(options.signal);
    this.finish({ exitCode: null, signal: options.signal });
    return { result: 'killed', survivors: [] };
  }

  async inputWaitEvidence(): Promise<InputWaitEvidence> {
    return this.evidence;
  }

  async foregroundProgram(): Promise<string | undefined> {
    return this.foreground;
  }

  async foregroundIsOwn(): Promise<boolean | undefined> {
    return this.ownGroup;
  }

  protected override disposeResources(): void {}
}

/** The in-memory scriptable driver (see the module doc). */
export class FakeDriver implements Driver {
  readonly specificationVersion = 1 as const;
  readonly kind: 'local' | 'ssh';
  readonly files = new Map<string, string>();
  readonly processes: FakeProcess[] = [];
  private readonly clock: Clock;
  private readonly scripts: Record<string, FakeCommand>;
  private nextPid = 1000;
  /** When set, openShell fails with this error. */
  failOpen: Error | undefined;
  /**
   * When true, isolated commands print their start marker (their wrapper has loaded the environment) only
   * at {@link FakeDriver.releaseStarts}.
   */
  holdStarts = false;
  private heldStarts: (() => void)[] = [];

  constructor(options: FakeDriverOptions) {
    this.clock = options.clock;
    this.scripts = options.commands ?? {};
    this.kind = options.kind ?? 'local';
  }

  /** Adds or replaces a scripted command. */
  script(text: string, command: FakeCommand): void {
    this.scripts[text] = command;
  }

  /** Lets the isolated commands held back start (see {@link FakeDriver.holdStarts}). */
  releaseStarts(): void {
    this.holdStarts = false;
    for (const start of this.heldStarts.splice(0)) start();
  }

  /** The session shells started so far. */
  get shells(): FakeProcess[] {
    return this.processes.filter((p) => p.lineHandler !== undefined);
  }

  async openShell(options: OpenShellOptions): Promise<TerminalProcess> {
    if (this.failOpen) throw this.failOpen;
    const initPath = options.args[options.args.indexOf('--rcfile') + 1] ?? options.env.ENV ?? '';
    const init = this.files.get(initPath) ?? '';
    const nonce = /__conch_n=([A-Za-z0-9]+)/.exec(init)?.[1];
    if (!nonce) throw new Error('fake shell: no nonce in init script');
    const proc = new FakeProcess(this.nextPid++, this.clock);
    this.processes.push(proc);
    let cwd = options.cwd ?? '/home/fake';
    const marker = (body: string) => `\x1b]${MARKER_OSC};${nonce};${body}\x07`;
    // At its prompt the shell waits in a read of the terminal.
    const prompt = () => {
      proc.evidence = 'blocked_read';
      proc.emit(`${marker('P')}$ `);
    };
    let buffer = '';
    proc.lineHandler = (data) => {
      buffer += data;
      // A line ends at CR or NL, as in a terminal that maps CR to NL.
      const cr = buffer.search(/[\r\n]/);
      if (cr < 0) return;
      const line = buffer.slice(0, cr);
      buffer = buffer.slice(cr + 1);
      proc.emit(`${line}\r\n`); // the line editor's echo
      const m = /^ __conch_s (\w+)(?: \d+)?;eval \$'(.*)';__conch_e \1$/s.exec(line);
      const f = /^ __conch_s (\w+)(?: \d+)?;\. '([^']*)';__conch_e \1$/.exec(line);
      if (!m && !f) {
        // A person's line: a scripted program of theirs holds the terminal until it exits; anything else
        // is done at once.
        const script = this.scripts[line];
        if (!script) return prompt();
        proc.ownGroup = false;
        proc.evidence = 'no';
        this.run(
          proc,
          line,
          cwd,
          false,
          () => {
            proc.setInputListener(undefined);
            proc.ownGroup = true;
            prompt();
          },
          true,
        );
        return;
      }
      const id = (m ?? f)![1]!;
      const body = m ? decodeAnsiC(m[2]!) : (this.files.get(f![2]!) ?? '').replace(/\n$/, '');
      const { text, cd } = unwrap(body);
      if (cd !== undefined) cwd = cd;
      proc.evidence = 'no';
      proc.emit(marker(`S;${id}`));
      this.run(proc, text, cwd, false, (status, newCwd) => {
        if (newCwd !== undefined) cwd = newCwd;
        proc.setInputListener(undefined);
        proc.emit(marker(`E;${id};${status};${cwd}`));
        proc.snapshot(marker(`D;${id};${proc.snapshotStatus}`));
        prompt();
      });
    };
    // Ready after the "rc files" ran.
    queueMicrotask(() => {
      proc.emit(marker(`R;${cwd}`));
      prompt();
    });
    return proc;
  }

  async spawn(options: SpawnOptions): Promise<TerminalProcess> {
    // The wrapper gets its session's nonce in the environment (see ShellIntegration.isolatedLaunch).
    const nonce = options.env[ISOLATED_NONCE_ENV] ?? '';
    const n = options.args.length;
    const id = options.args[n - 1]!;
    const text = unwrap(options.args[n - 2]!).text;
    const cwd = options.args[n - 3] || '/home/fake';
    const proc = new FakeProcess(this.nextPid++, this.clock);
    proc.args = options.args;
    this.processes.push(proc);
    const marker = (body: string) => `\x1b]${MARKER_OSC};${nonce};${body}\x07`;
    const start = () => {
      proc.emit(marker(`S;${id}`));
      this.run(proc, text, cwd, true, (status) => {
        proc.emit(marker(`E;${id};${status};${cwd}`));
        proc.finish({ exitCode: status, signal: null });
      });
    };
    queueMicrotask(() => {
      if (this.holdStarts) this.heldStarts.push(start);
      else start();
    });
    return proc;
  }

  private run(
    proc: FakeProcess,
    text: string,
    cwd: string,
    isolated: boolean,
    done: (status: number, cwd?: string) => void,
    byPerson = false,
  ): void {
    let finished = false;
    const ctx: FakeCommandContext = {
      text,
      cwd,
      clock: this.clock,
      isolated,
      byPerson,
      print: (data) => {
        if (!finished) proc.emit(data);
      },
      exit: (status, newCwd) => {
        if (finished) return;
        finished = true;
        proc.signalListener = undefined;
        proc.jobEnd = undefined;
        done(status, newCwd);
      },
      onInput: (listener) => proc.setInputListener(listener),
      onSignal: (listener) => {
        proc.signalListener = listener;
      },
      setInputWait: (evidence) => {
        proc.evidence = evidence;
      },
      exitShell: (status) => {
        finished = true;
        proc.finish({ exitCode: status, signal: null });
      },
    };
    proc.signalListener = undefined;
    proc.jobEnd = (signal) => ctx.exit(statusOfSignal(signal));
    const script = this.scripts[text] ?? builtin(text);
    script(ctx);
  }

  async writePrivateFile(name: string, content: string): Promise<string> {
    const path = `/fake/private/${name}`;
    this.files.set(path, content);
    return path;
  }

  async removePrivateFile(path: string): Promise<void> {
    this.files.delete(path);
  }

  async defaultShell(): Promise<string> {
    return '/bin/bash';
  }

  async dispose(): Promise<void> {
    for (const p of this.processes) p.finish({ exitCode: null, signal: 'SIGKILL' });
  }
}

/** The status of a job killed by `signal`, as a shell reports it: 128 + the signal's number (SIGTERM's if unknown). */
function statusOfSignal(signal: string): number {
  const entry = Object.entries(SIGNAL_NAMES).find(([, name]) => name === signal);
  return 128 + (entry ? Number(entry[0]) : 15);
}

/** The fake shell's built-in commands: echo, printf-less basics, true/false, exit, cd, pwd, sleep. */
function builtin(text: string): FakeCommand {
  const words = text.trim().split(/\s+/);
  const name = words[0] ?? '';
  const arg = words.slice(1).join(' ');
  switch (name) {
    case 'echo':
      return (c) => {
        c.print(`${arg}\r\n`);
        c.exit(0);
      };
    case 'true':
      return (c) => c.exit(0);
    case 'false':
      return (c) => c.exit(1);
    case 'exit':
      return (c) => c.exitShell(Number(arg || 0));
    case 'cd':
      return (c) => c.exit(0, arg.startsWith('/') ? arg : `${c.cwd}/${arg}`);
    case 'pwd':
      return (c) => {
        c.print(`${c.cwd}\r\n`);
        c.exit(0);
      };
    case 'sleep':
      return (c) => {
        c.clock.setTimeout(() => c.exit(0), Number(arg) * 1000);
      };
    default:
      return (c) => {
        c.print(`fake-sh: ${name}: command not found\r\n`);
        c.exit(127);
      };
  }
}
