/**
 * The engine: sessions, commands and the calls of docs/tools.md over injected drivers and an injected clock.
 * Faces (MCP server, CLI) validate and render; everything that a call means happens here.
 */

import type { Clock } from '../clock.js';
import type {
  Disposable,
  Driver,
  DriverKind,
  KillReport,
  SandboxLaunch,
  ScreenFactory,
  ScreenSnapshot,
  SpillStore,
  TerminalProcess,
} from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { hint, type Vocabulary, verb } from '../hint.js';
import { ENV_NAME_RULE, isValidEnvName } from '../host/environment.js';
import { COMMAND_MARKER, SESSION_MARKER } from '../host/markers.js';
import { normalizeSignal } from '../host/signals.js';
import { encodeKeys } from '../input/key-map.js';
import { typedLines } from '../input/typed-line.js';
import { compactScreen } from '../output/compact-screen.js';
import { OutputLog } from '../output/output-log.js';
import { sandboxFailureHint } from '../sandbox/failure-hint.js';
import type { SandboxRules } from '../sandbox/rules.js';
import { ShellIntegration, shellKindOf, shellQuote } from '../shell/shell-integration.js';
import { isKnownShell, runsTypedCommands, SHELL_PROGRAMS } from '../shell/shell-programs.js';
import type {
  ByteRead,
  CallContext,
  CloseSessionResult,
  CommandResult,
  KillResult,
  ProcessInfo,
  SessionInfo,
  WaitOptions,
} from '../types.js';
import { Command, type CommandTerminal } from './command.js';
import { settledMarkedProcesses } from './escapees.js';
import { cryptoRandomBytes, newCommandId, newNonce, newSessionId, type RandomBytes } from './ids.js';
import { DEFAULT_ENGINE_DEFAULTS, DEFAULT_LIMITS, type EngineDefaults, type EngineLimits } from './limits.js';
import { cutListedCommands } from './listing.js';
import {
  checkDirectoryParameter,
  KILL_SIGNALS,
  type ParameterContext,
  resolveParameter,
} from './parameters.js';
import type { AuditSink, CommandPolicy, PolicyDecision } from './policy-hook.js';
import { Session, signalFromStatus, type TerminalWatcher } from './session.js';
import { TerminalStream } from './terminal-stream.js';
import { compileUserPattern, type TextPattern } from './user-pattern.js';
import { type WaitOutcome, type WaitSpec, waitForCommand } from './waiter.js';

/** Grace between the polite signal and SIGKILL when a session closes or the server shuts down. */
const CLOSE_GRACE_MS = 2000;

/** The id and name of the session used when a command names none. */
export const DEFAULT_SESSION_ID = 'default';

/** What a person asks for when attaching to a session (see {@link SessionManager.attachTerminal}). */
export interface AttachRequest {
  /** The person explicitly asked to type into the session (`conch attach --take-over`). */
  takeOver?: boolean;
  /**
   * The person only watches (the web page until they take over): keystrokes are refused, and the view is
   * counted among the viewers but not among those who may type. Overrides `takeOver`.
   */
  watchOnly?: boolean;
  /**
   * The attaching program runs inside a terminal conch itself manages (an agent's command), as found by
   * the face (e.g. from the host's process facts). Under a policy such a client may only watch.
   */
  fromConchTerminal?: boolean;
}

/** A person's live view of a session's terminal (see {@link SessionManager.attachTerminal}). */
export interface TerminalAttachment {
  /**
   * Whether keystrokes are forwarded: always without a policy; under a policy only when the person asked
   * to take over (and not from inside a conch terminal). A read-only view refuses {@link write}.
   */
  readonly input: boolean;
  /** Why the view is read-only (undefined when input is forwarded). */
  readonly readOnlyReason: string | undefined;
  /** Types raw bytes into the terminal, as keystrokes. Rejects with `POLICY_DENIED` on a read-only view. */
  write(data: string | Uint8Array): Promise<void>;
  /** Resizes the terminal to the person's window (clamped to the engine's limits). */
  resize(cols: number, rows: number): void;
  /** The terminal's current screen (undefined without a screen renderer). */
  screen(): Promise<ScreenSnapshot | undefined>;
  /** Stops the view and restores the terminal's previous size. Idempotent. */
  detach(): void;
}

/** What the engine is built from. */
export interface SessionManagerOptions {
  clock: Clock;
  /** Driver for local sessions (and the default session). */
  localDriver?: Driver;
  spill?: SpillStore;
  screen?: ScreenFactory;
  random?: RandomBytes;
  limits?: Partial<EngineLimits>;
  defaults?: Partial<EngineDefaults>;
  policy?: CommandPolicy;
  audit?: AuditSink;
  /** Keep spill files when commands are pruned or sessions close (`--keep-spill`). Default false. */
  keepLogs?: boolean;
}

/** `create_local` parameters. */
export interface CreateLocalRequest {
  shell?: string;
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  name?: string;
  /** Run the session inside an OS sandbox with these (resolved) rules; fixed for the session's life. */
  sandbox?: SandboxRules;
}

/** Parameters for opening a session on any driver (`create_local`, `connect_ssh`, `create_container`). */
export interface OpenSessionRequest extends CreateLocalRequest {
  kind: DriverKind;
  host?: string;
  port?: number;
  username?: string;
  /** The container a container session runs in (its name), and its image (for `list_sessions`). */
  container?: string;
  image?: string;
  /** Fixed id (only the default session uses this). */
  id?: string;
}

/** `execute` parameters. */
export interface ExecuteRequest extends WaitOptions {
  command: string;
  session_id?: string;
  background?: boolean;
  cwd?: string;
  max_output_chars?: number;
}

/** `read_output` parameters. */
export interface ReadOutputRequest extends WaitOptions {
  command_id: string;
  offset?: number;
  length?: number;
  view?: 'text' | 'screen' | 'raw';
  filter?: string;
  max_output_chars?: number;
}

/** `respond` parameters. */
export interface RespondRequest extends WaitOptions {
  command_id: string;
  text: string;
  enter?: boolean;
  secret?: boolean;
}

/** `send_control` parameters. */
export interface SendControlRequest extends WaitOptions {
  command_id: string;
  key: string | string[];
}

/** `list_processes` parameters. */
export interface ListProcessesRequest {
  filter?: string;
  session_id?: string;
  include_finished?: boolean;
}

/** `kill_process` parameters. */
export interface KillProcessRequest {
  command_id: string;
  signal?: string;
  grace_s?: number;
}

/** Signals `kill_process` accepts (defined with the other parameter rules). */
export { KILL_SIGNALS };

/** The engine (see the module doc). */
export class SessionManager implements ParameterContext {
  readonly clock: Clock;
  readonly limits: EngineLimits;
  readonly defaults: EngineDefaults;
  private readonly localDriver: Driver | undefined;
  private readonly spill: SpillStore | undefined;
  private readonly screenFactory: ScreenFactory | undefined;
  private readonly random: RandomBytes;
  private readonly policy: CommandPolicy | undefined;
  private readonly audit: AuditSink | undefined;
  private readonly keepLogs: boolean;
  private readonly sessions = new Map<string, Session>();
  private readonly commands = new Map<string, Command>();
  /** The finished commands in the order they ended, oldest first: what {@link prune} drops first. */
  private readonly finished = new Map<string, Command>();
  private readonly opening = new Map<string, Promise<Session>>();
  /** Ids of the sessions being opened right now (they count against the session limit). */
  private readonly openingIds = new Set<string>();
  private shuttingDown = false;

  constructor(options: SessionManagerOptions) {
    this.clock = options.clock;
    this.localDriver = options.localDriver;
    this.spill = options.spill;
    this.screenFactory = options.screen;
    this.random = options.random ?? cryptoRandomBytes;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.defaults = { ...DEFAULT_ENGINE_DEFAULTS, ...options.defaults };
    this.policy = options.policy;
    this.audit = options.audit;
    this.keepLogs = options.keepLogs === true;
  }

  // ---------------------------------------------------------------------------------------------
  // Sessions

  /** `create_local`: a new local session. */
  async createLocal(request: CreateLocalRequest = {}): Promise<SessionInfo> {
    const session = await this.openSession(this.requireLocalDriver(), { ...request, kind: 'local' });
    return session.toInfo();
  }

  /**
   * Opens a session on `driver` and waits until its shell is ready. Used by `create_local` and by the
   * SSH face. On failure nothing is left behind.
   */
  async openSession(driver: Driver, request: OpenSessionRequest): Promise<Session> {
    this.assertOpen();
    if (request.cwd !== undefined) checkDirectoryParameter('cwd', request.cwd);
    // Each session counts once, whether it is open or still opening.
    const counted = new Set([...this.sessions.keys(), ...this.openingIds]).size;
    if (counted >= this.limits.maxSessions) {
      const opening = this.openingIds.size;
      throw new ConchError(
        ErrorCode.LIMIT_REACHED,
        `Session limit reached: ${counted} of ${this.limits.maxSessions} sessions are open${opening > 0 ? ` (${opening} of them still starting)` : ''}.`,
        { hint: hint`Close a session with ${verb('closeSession')} (${verb('listSessions')} shows them).` },
      );
    }
    let id = request.id ?? this.uniqueSessionId();
    while (request.id === undefined && this.openingIds.has(id)) id = this.uniqueSessionId();
    this.openingIds.add(id);
    try {
      return await this.openSessionNow(driver, { ...request, id });
    } finally {
      this.openingIds.delete(id);
    }
  }

  private async openSessionNow(driver: Driver, request: OpenSessionRequest): Promise<Session> {
    const cols = resolveParameter('cols', request.cols, this);
    const rows = resolveParameter('rows', request.rows, this);
    if (request.env !== undefined) this.checkEnv(request.env);
    if (request.shell !== undefined) await this.checkShell(request.shell, driver);
    const id = request.id ?? this.uniqueSessionId();
    const shell = request.shell ?? this.defaults.shell ?? (await driver.defaultShell());
    const shellKind = shellKindOf(shell);
    const integration = new ShellIntegration(shellKind, newNonce(this.random));
    const noRc = this.policy?.active === true;
    const env: Record<string, string> = {
      ...this.defaults.env,
      ...request.env,
      [SESSION_MARKER]: id,
    };
    if (request.sandbox !== undefined && driver.kind !== 'local') {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, `A ${driver.kind} session cannot be sandboxed.`);
    }
    const envFile = await driver.writePrivateFile(`${id}/env`, '');
    const sandbox: SandboxLaunch | undefined =
      request.sandbox === undefined
        ? undefined
        : { rules: request.sandbox, privateDir: envFile.slice(0, envFile.lastIndexOf('/')) };
    const initName = shellKind === 'zsh' ? `${id}/.zshrc` : `${id}/init.sh`;
    const initPath = await driver.writePrivateFile(initName, integration.initScript({ envFile, noRc }));
    const launch = integration.launch(initPath, { noRc });
    const screen = this.screenFactory?.(cols, rows);
    const session = new Session({
      id,
      name: request.name ?? id,
      kind: request.kind,
      shell,
      shellKind,
      driver,
      integration,
      clock: this.clock,
      cols,
      rows,
      screen,
      envFile,
      env,
      writeDeadlineMs: this.defaults.writeDeadlineMs,
      ...(request.host === undefined ? {} : { host: request.host }),
      ...(request.port === undefined ? {} : { port: request.port }),
      ...(request.username === undefined ? {} : { username: request.username }),
      ...(request.container === undefined ? {} : { container: request.container }),
      ...(request.image === undefined ? {} : { image: request.image }),
      ...(sandbox === undefined ? {} : { sandbox }),
    });
    const cwd = request.cwd ?? (request.kind === 'local' ? this.defaults.cwd : undefined);
    let proc: TerminalProcess;
    try {
      proc = await driver.openShell({
        shell,
        args: launch.args,
        cwd,
        env: { ...env, ...launch.env },
        cols,
        rows,
        ...(sandbox === undefined ? {} : { sandbox }),
      });
    } catch (error) {
      screen?.dispose();
      throw ConchError.is(error)
        ? error
        : new ConchError(
            ErrorCode.INVALID_ARGUMENT,
            `Could not start shell ${JSON.stringify(shell)}: ${String(error)}`,
            {
              hint: 'Give an existing shell (bash, zsh, sh) and an existing cwd.',
              cause: error,
            },
          );
    }
    this.sessions.set(id, session);
    try {
      await session.attach(proc, this.defaults.shellStartTimeoutMs);
    } catch (error) {
      this.sessions.delete(id);
      await session.close(0).catch(() => {});
      throw error;
    }
    return session;
  }

  /** `list_sessions`. */
  listSessions(): SessionInfo[] {
    this.prune();
    return [...this.sessions.values()].map((s) => s.toInfo());
  }

  /**
   * The session a reference names (for faces that need the object, e.g. SSH reconnect): the session with
   * that id, else the one session with that name. A name that several sessions carry is refused
   * (`INVALID_ARGUMENT`, naming their ids); an unknown reference is `SESSION_NOT_FOUND`.
   */
  getSession(sessionId: string): Session {
    const byId = this.sessions.get(sessionId);
    if (byId) return byId;
    const named = [...this.sessions.values()].filter((s) => s.name === sessionId);
    const [only] = named;
    if (only && named.length === 1) return only;
    if (named.length > 1) {
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Ambiguous session name ${JSON.stringify(sessionId)}: sessions ${named.map((s) => s.id).join(', ')} are all named so.`,
        { hint: 'Give one of those session ids instead of the name.' },
      );
    }
    const open = [...this.sessions.values()].map((s) => (s.name === s.id ? s.id : `${s.id} (${s.name})`));
    throw new ConchError(ErrorCode.SESSION_NOT_FOUND, `Invalid session_id: ${JSON.stringify(sessionId)}.`, {
      hint: hint`Valid session ids (names in brackets, also accepted): ${open.join(', ') || '(none)'}; call ${verb('listSessions')}.`,
    });
  }

  /**
   * A person's live view of a session's terminal (`conch attach`). `viewer.onOutput` gets every byte the
   * terminal prints from now on, as the person would see it: conch's markers removed, the line conch types
   * to run an agent's command shown as the command's own text, secrets masked; `viewer.onClose` fires
   * when the shell ends. The handle types raw keystrokes, resizes the terminal (restored on `detach`) and
   * gives the current screen to start the view with. The agent's commands keep working during and after.
   *
   * Keystrokes typed this way are not checked by the command policy (a person at a terminal is not the
   * agent). So under a policy the view is read-only unless `takeOver` is asked for, and `takeOver` is
   * refused (`POLICY_DENIED`) from inside a terminal conch manages, where the typist would be an agent.
   * A take-over is recorded in the audit log; the keystrokes themselves are not (they may be passwords).
   */
  attachTerminal(
    sessionId: string,
    viewer: TerminalWatcher,
    request: AttachRequest = {},
  ): TerminalAttachment {
    const session = this.getSession(sessionId);
    if (!session.proc) {
      throw new ConchError(ErrorCode.SESSION_CLOSED, `Session ${sessionId} is closed.`, {
        hint: hint`${verb('listSessions')} shows the open sessions.`,
      });
    }
    let readOnlyReason: string | undefined;
    if (request.watchOnly) readOnlyReason = 'opened to watch only; take over to type into the session';
    else if (this.policy?.active) {
      if (request.takeOver && request.fromConchTerminal) {
        const reason =
          'taking over a session from inside a terminal conch manages: keystrokes typed there would come from an agent and bypass the command policy';
        this.audit?.record({
          kind: 'attach',
          session_id: sessionId,
          input: 'take over',
          decision: 'deny',
          reason,
        });
        throw new ConchError(ErrorCode.POLICY_DENIED, `Denied by policy: ${reason}.`, {
          hint: 'Attach without taking over to watch, or take over from your own terminal.',
        });
      }
      if (request.takeOver) {
        this.audit?.record({
          kind: 'attach',
          session_id: sessionId,
          input: 'take over',
          decision: 'allow',
          reason:
            'a person at a terminal took over the session; their keystrokes are not checked or recorded',
        });
      } else {
        readOnlyReason = 'a command policy is configured; take over explicitly to type into the session';
      }
    }
    const input = readOnlyReason === undefined;
    const original = { cols: session.cols, rows: session.rows };
    let resized = false;
    let attached = true;
    const watching = session.watch(viewer, { input });
    return {
      input,
      readOnlyReason,
      write: async (data) => {
        if (!attached)
          return Promise.reject(new ConchError(ErrorCode.INVALID_ARGUMENT, 'This view is detached.'));
        if (!input) {
          return Promise.reject(
            new ConchError(
              ErrorCode.POLICY_DENIED,
              `Denied by policy: this view is read-only (${readOnlyReason}).`,
              {
                hint: 'Nothing was typed.',
              },
            ),
          );
        }
        const line = await session.personWrite(
          typeof data === 'string' ? new TextEncoder().encode(data) : data,
        );
        // The person's own command, recorded as theirs (lines typed into a program may be secrets: never).
        if (line)
          this.audit?.record({
            kind: 'attach',
            by: 'person',
            session_id: sessionId,
            input: line.text,
            decision: 'allow',
            reason: `typed by a person at the shell's prompt through conch attach (not checked by the policy)${line.exact ? '' : '; edited with keys conch does not replay, so what ran may differ'}`,
          });
      },
      resize: (cols, rows) => {
        if (!attached || !session.proc) return;
        const c = Math.min(Math.max(Math.floor(cols), 1), this.limits.maxCols);
        const r = Math.min(Math.max(Math.floor(rows), 1), this.limits.maxRows);
        if (!Number.isFinite(c) || !Number.isFinite(r)) return;
        resized = true;
        session.resize(c, r);
      },
      screen: () => session.screenSnapshot(),
      detach: () => {
        if (!attached) return;
        attached = false;
        watching.dispose();
        if (resized && session.proc) session.resize(original.cols, original.rows);
      },
    };
  }

  /** `close_session`: kills every process of the session and removes it. */
  async closeSession(sessionId: string): Promise<CloseSessionResult> {
    const session = this.getSession(sessionId);
    const killed: string[] = [];
    // docs/sessions.md: everything is gone within 5 s — a short grace, then SIGKILL.
    const graceMs = Math.min(this.defaults.killGraceS * 1000, CLOSE_GRACE_MS);
    const live = session.commandIds
      .map((id) => this.commands.get(id))
      .filter((c): c is Command => !!c && !c.ended);
    await Promise.all(
      live
        .filter((c) => c.isolated)
        .map(async (c) => {
          c.killRequested = true;
          killed.push(c.id);
          await c.terminal.kill({ signal: 'SIGTERM', graceMs }).catch(() => undefined);
        }),
    );
    if (session.foreground && !session.foreground.ended) {
      session.foreground.killRequested = true;
      killed.push(session.foreground.id);
    }
    await session.close(graceMs);
    for (const c of live) if (!c.ended) c.end({ state: 'killed', exitCode: null, signal: 'SIGTERM' });
    this.sessions.delete(session.id);
    for (const id of session.commandIds) this.forgetCommand(id);
    for (const file of session.snapshotFiles()) void session.driver.removePrivateFile(file).catch(() => {});
    // A remote host's driver (its connection) goes with the last session that uses it.
    const stillUsed = [...this.sessions.values()].some((s) => s.driver === session.driver);
    if (session.kind !== 'local' && !stillUsed) await session.driver.dispose().catch(() => {});
    return { session_id: session.id, closed: true, killed_command_ids: killed };
  }

  // ---------------------------------------------------------------------------------------------
  // Commands

  /** `execute`: runs a command and waits per docs/waiting.md. */
  async execute(request: ExecuteRequest, context: CallContext = {}): Promise<CommandResult> {
    this.assertOpen();
    const text = this.checkInput('command', request.command);
    if (text.trim() === '') {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, 'command is empty.', {
        hint: 'Give a shell command.',
      });
    }
    if (request.cwd !== undefined) checkDirectoryParameter('cwd', request.cwd);
    if (text.includes('\0')) {
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Invalid command: it contains a NUL byte at index ${text.indexOf('\0')}; a shell command cannot.`,
        { hint: 'Remove the NUL (\\0) characters; to produce one, use printf "\\0" in the command.' },
      );
    }
    const spec = this.waitSpec(request, false);
    const maxChars = this.maxChars(request.max_output_chars);
    const background = resolveParameter('background', request.background, this);
    // The policy decides before anything happens, even before the default session is created.
    this.checkPolicy(text, 'execute', request.session_id ?? DEFAULT_SESSION_ID);
    const session = await this.resolveSession(request.session_id);
    this.prune();
    this.checkLiveLimit();
    // Typed into the shell only when it waits at an empty prompt, whoever else uses it (terminal-busy.ts).
    const turn = background ? undefined : await session.takeTurn();
    let command: Command;
    try {
      if (turn?.free) command = await this.startForeground(session, text, request.cwd);
      else {
        turn?.release();
        command = await this.startIsolated(session, text, request.cwd, background, turn?.byPerson === true);
      }
    } finally {
      turn?.release();
    }
    if (session.newShellNotice) {
      session.newShellNotice = false;
      command.newShell = true;
    }
    if (background) {
      const outcome = await waitForCommand(
        command,
        {
          ...spec,
          pauseMs: this.defaults.backgroundProbeMs,
          totalMs: this.defaults.backgroundProbeMs,
          until: undefined,
        },
        this.clock,
        {},
      );
      const reason = outcome.reason === 'exited' ? 'exited' : 'background';
      return this.result(command, { reason }, maxChars, true, context.vocabulary);
    }
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return this.viewResult(command, outcome, maxChars, spec, context.vocabulary);
  }

  /** `read_output`: waits for more output, or pages through the log when `offset` is given. */
  async readOutput(request: ReadOutputRequest, context: CallContext = {}): Promise<CommandResult> {
    const command = this.getCommand(request.command_id);
    const maxChars = this.maxChars(request.max_output_chars);
    const view = resolveParameter('view', request.view, this);
    const filter = request.filter === undefined ? undefined : compileUserPattern('filter', request.filter);
    if (request.offset !== undefined || filter !== undefined) {
      const length = resolveParameter('length', request.length, this);
      const offset = request.offset ?? 0;
      if (!Number.isInteger(offset)) {
        throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid offset: ${offset}.`, {
          hint: 'offset is a whole number: ≥ 0 = absolute line (0-based), < 0 = the last |offset| lines.',
        });
      }
      return this.pageResult(command, offset, length, filter, maxChars);
    }
    const spec = this.waitSpec(request, false);
    // A screen read shows the screen as it is now; it waits only when asked to.
    if (view === 'screen' && request.pause_timeout === undefined && request.until === undefined) {
      spec.pauseMs = 0;
    }
    const outcome = await waitForCommand(command, spec, this.clock, context);
    if (view === 'text') return this.viewResult(command, outcome, maxChars, spec, context.vocabulary);
    const result = this.result(command, outcome, maxChars, false);
    if (view === 'raw') {
      const raw = command.log.rawTail(maxChars);
      result.output = raw.note === '' ? raw.text : `${raw.note}\n${raw.text}`;
    } else {
      const screen = await command.terminal.screen();
      if (screen) {
        result.screen = screen;
        result.output = screen.rows.join('\n');
        // The agent has seen the terminal as it is now: the text view continues from here.
        this.skipTextToNow(command);
      }
    }
    return result;
  }

  /**
   * A command's raw output from the absolute byte offset `fromByte` (0 = its first byte), without
   * waiting: the byte positions never shift (they count every byte the command ever printed), so a
   * cursor kept by a caller stays valid however much is printed later. Bytes older than the raw ring
   * are reported as dropped instead. Non-destructive: the same range can be read again.
   */
  readBytes(commandId: string, fromByte: number): ByteRead {
    const command = this.getCommand(commandId);
    if (!Number.isSafeInteger(fromByte) || fromByte < 0) {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid byte offset: ${fromByte}.`, {
        hint: 'The offset is a whole number of bytes ≥ 0 (0 = the beginning; a previous total_bytes = only new output).',
      });
    }
    const read = command.log.rawSince(fromByte);
    return {
      text: read.text,
      from_byte: read.fromByte,
      next_byte: read.next,
      bytes_total: command.log.bytesTotal,
      dropped_bytes: read.droppedBytes,
      state: command.state,
      exit_code: command.exitCode,
      signal: command.signal,
    };
  }

  /**
   * Follows a command's raw output as it arrives (e.g. the CLI streaming it to a terminal): `listener` gets
   * the bytes from absolute offset `fromByte` at once (as {@link readBytes} reads them), then every new
   * piece as it is printed, and a last call when the command ends. Dispose to stop; it also stops by
   * itself when the command ends. Nothing is consumed: other readers see the same output.
   */
  followOutput(commandId: string, fromByte: number, listener: (read: ByteRead) => void): Disposable {
    let cursor = this.readBytes(commandId, fromByte).from_byte;
    const command = this.getCommand(commandId);
    const push = (): void => {
      const read = this.readBytes(commandId, cursor);
      if (read.next_byte === cursor && !command.ended) return;
      cursor = read.next_byte;
      listener(read);
    };
    push();
    if (command.ended) return { dispose: () => {} };
    const output = command.onOutput.on(push);
    const end = command.onEnd.on(() => {
      output.dispose();
      push();
    });
    return {
      dispose: () => {
        output.dispose();
        end.dispose();
      },
    };
  }

  /** `respond`: types text (and Enter) into a running command, then waits. */
  async respond(request: RespondRequest, context: CallContext = {}): Promise<CommandResult> {
    const command = this.getLiveCommand(request.command_id);
    const text = this.checkInput('text', request.text);
    const spec = this.waitSpec(request, true);
    const enter = resolveParameter('enter', request.enter, this);
    const secret = resolveParameter('secret', request.secret, this);
    const bytes = enter ? `${text}\r` : text;
    await this.checkTypedInput(command, bytes, 'respond', secret);
    if (secret) command.terminal.addSecret(text);
    command.markInputSent();
    await command.terminal.write(bytes, this.defaults.writeDeadlineMs);
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return this.viewResult(command, outcome, this.maxChars(undefined), spec, context.vocabulary);
  }

  /** `send_control`: presses keys in a running command's terminal, then waits. */
  async sendControl(request: SendControlRequest, context: CallContext = {}): Promise<CommandResult> {
    const command = this.getLiveCommand(request.command_id);
    const bytes = encodeKeys(request.key, { applicationCursor: command.log.applicationCursor });
    const spec = this.waitSpec(request, true);
    await this.checkTypedInput(command, bytes, 'send_control', false);
    command.markInputSent();
    await command.terminal.write(bytes, this.defaults.writeDeadlineMs);
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return this.viewResult(command, outcome, this.maxChars(undefined), spec, context.vocabulary);
  }

  /** `list_processes`. */
  listProcesses(request: ListProcessesRequest = {}): { processes: ProcessInfo[] } {
    this.prune();
    const includeFinished = resolveParameter('include_finished', request.include_finished, this);
    const filter = request.filter?.toLowerCase();
    const sessionId = request.session_id === undefined ? undefined : this.getSession(request.session_id).id;
    const processes = [...this.commands.values()]
      .filter((c) => includeFinished || !c.ended)
      .filter((c) => sessionId === undefined || c.sessionId === sessionId)
      .filter((c) => filter === undefined || c.text.toLowerCase().includes(filter) || c.id.includes(filter))
      .map((c) => c.toProcessInfo());
    return { processes: cutListedCommands(processes, this.limits) };
  }

  /**
   * `list_processes` with what ended commands left running: each ended command's live processes tagged
   * with its id, as `escaped_pids` (each session's host scanned until the answer settles, see
   * `settledMarkedProcesses`; a host that cannot tell adds none).
   */
  async listProcessesWithEscapees(request: ListProcessesRequest = {}): Promise<{ processes: ProcessInfo[] }> {
    const { processes } = this.listProcesses(request);
    const ended = new Map<string, string[]>();
    for (const p of processes) {
      if (p.state === 'running' || p.state === 'awaiting_input') continue;
      const ids = ended.get(p.session_id);
      if (ids) ids.push(p.command_id);
      else ended.set(p.session_id, [p.command_id]);
    }
    const found = new Map<string, number[]>();
    await Promise.all(
      [...ended].map(async ([sessionId, ids]) => {
        const proc = this.sessions.get(sessionId)?.proc;
        const scan = proc?.markedProcesses?.bind(proc);
        if (!scan) return;
        try {
          for (const [id, pids] of await settledMarkedProcesses(() => scan(ids), this.clock))
            found.set(id, pids);
        } catch {
          // The host could not tell (link lost, no helper channel): list the rows as they are.
        }
      }),
    );
    for (const p of processes) {
      const pids = found.get(p.command_id);
      if (pids && pids.length > 0) p.escaped_pids = pids;
    }
    return { processes };
  }

  /** `kill_process`: kills a command's whole process tree. */
  async killProcess(request: KillProcessRequest): Promise<KillResult> {
    const command = this.getCommand(request.command_id);
    // Case and the SIG prefix are free ("term" = "SIGTERM"); the rule names the valid signals.
    const given =
      request.signal === undefined ? undefined : (normalizeSignal(request.signal) ?? request.signal);
    const normalized = resolveParameter('signal', given, this);
    const graceS = resolveParameter('grace_s', request.grace_s, this);
    if (command.ended) {
      // The command has ended, but what it left behind (a setsid daemon, a `&` job) still carries its id:
      // kill that, whatever became of the command's own process.
      const proc = this.sessions.get(command.sessionId)?.proc;
      const report = proc?.killMarked
        ? await proc.killMarked({ signal: normalized, graceMs: graceS * 1000, markerId: command.id })
        : { result: 'already_exited' as const, survivors: [] };
      return {
        command_id: command.id,
        result: report.result,
        exit_code: command.exitCode,
        signal: command.signal,
        survivors: report.survivors,
      };
    }
    command.killRequested = true;
    const report = await command.terminal.kill({ signal: normalized, graceMs: graceS * 1000 });
    if (!command.ended) {
      // The tree is gone but no end was reported yet (e.g. a foreground job whose shell prompt is
      // still being drawn): wait briefly for the marker, then end it ourselves.
      await waitForCommand(
        command,
        { pauseMs: 2000, totalMs: 2000, settleMs: 1e9, inputJustSent: true, progressMs: 1e9 },
        this.clock,
      );
      if (!command.ended && report.result !== 'stop_unconfirmed') {
        command.end({ state: 'killed', exitCode: null, signal: normalized });
      }
    }
    return {
      command_id: command.id,
      result: report.result === 'already_exited' ? 'killed' : report.result,
      exit_code: command.exitCode,
      signal: command.signal ?? normalized,
      survivors: report.survivors,
    };
  }

  /** `check_command`: the policy decision for a command, without running anything. */
  checkCommand(command: string, sessionId?: string): PolicyDecision {
    const text = this.checkInput('command', command);
    if (sessionId !== undefined) this.getSession(sessionId);
    const decision = this.policy?.evaluate(text, { historyExpansion: false }) ?? {
      decision: 'allow' as const,
      reason: 'No policy is configured: every command is allowed.',
      commands: [],
    };
    this.audit?.record({
      kind: 'check',
      input: text,
      decision: decision.decision,
      reason: decision.reason,
      ...(sessionId === undefined ? {} : { session_id: sessionId }),
    });
    return decision;
  }

  /** Kills everything every session started and closes them (server shutdown). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.allSettled([...this.sessions.keys()].map((id) => this.closeSession(id)));
    for (const c of this.commands.values()) {
      if (!c.ended) {
        await c.terminal.kill({ signal: 'SIGKILL', graceMs: 0 }).catch(() => undefined);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Internals

  private assertOpen(): void {
    if (this.shuttingDown) throw new ConchError(ErrorCode.INTERNAL, 'The server is shutting down.');
  }

  private requireLocalDriver(): Driver {
    if (!this.localDriver) {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, 'Local sessions are not available in this server.');
    }
    return this.localDriver;
  }

  private uniqueSessionId(): string {
    for (;;) {
      const id = newSessionId(this.random);
      if (!this.sessions.has(id)) return id;
    }
  }

  private async resolveSession(sessionId: string | undefined): Promise<Session> {
    const id = sessionId ?? DEFAULT_SESSION_ID;
    const existing = this.sessions.get(id);
    if (
      id === DEFAULT_SESSION_ID &&
      (!existing || existing.state === 'closed' || existing.state === 'lost')
    ) {
      if (existing) {
        this.sessions.delete(id);
        for (const cid of existing.commandIds) this.forgetCommand(cid);
      }
      let opening = this.opening.get(id);
      if (!opening) {
        const replacesExited = existing !== undefined;
        opening = this.openSession(this.requireLocalDriver(), {
          kind: 'local',
          id,
          name: DEFAULT_SESSION_ID,
          ...(this.defaults.sandbox === undefined ? {} : { sandbox: this.defaults.sandbox }),
        }).then((session) => {
          // The agent's cwd and exports went with the old shell: the first result in the new one says so.
          session.newShellNotice = replacesExited;
          return session;
        });
        this.opening.set(id, opening);
        opening.then(
          () => this.opening.delete(id),
          () => this.opening.delete(id),
        );
      }
      return opening;
    }
    const session = this.getSession(id);
    if (session.state === 'closed') {
      throw new ConchError(ErrorCode.SESSION_CLOSED, `Session ${id} is closed (its shell exited).`, {
        hint: hint`Open a new session with ${verb('createLocal')} or ${verb('connectSsh')}, or omit session_id to use the default session.`,
      });
    }
    if (session.state === 'lost') {
      const container = session.kind === 'container';
      throw new ConchError(
        ErrorCode.SESSION_LOST,
        `Session ${id} is lost (${container ? 'its container or its engine went away' : 'its connection went away'}).`,
        {
          hint: container
            ? hint`Open a new one with ${verb('createContainer')}; ${verb('closeSession')} removes the lost session (and the container conch created for it).`
            : hint`Reconnect with ${verb('connectSsh')}; ${verb('closeSession')} removes the lost session.`,
        },
      );
    }
    return session;
  }

  private getCommand(commandId: string): Command {
    this.prune();
    const command = this.commands.get(commandId);
    if (!command) {
      throw new ConchError(ErrorCode.COMMAND_NOT_FOUND, `Invalid command_id: ${JSON.stringify(commandId)}.`, {
        hint: hint`The id is unknown or was pruned (finished > 30 min ago or beyond the newest 200); ${verb('listProcesses')} shows valid ids.`,
      });
    }
    return command;
  }

  private getLiveCommand(commandId: string): Command {
    const command = this.getCommand(commandId);
    if (command.ended) {
      throw new ConchError(
        ErrorCode.COMMAND_FINISHED,
        `Command ${commandId} has already finished (${command.state}, exit code ${command.exitCode}); it takes no input.`,
        {
          hint: hint`${verb('readOutput')} still returns its log; run a new command with ${verb('execute')}.`,
        },
      );
    }
    return command;
  }

  private newLog(commandId: string): OutputLog {
    const spill = this.spill?.create(commandId);
    return new OutputLog({
      ringChars: this.limits.ringChars,
      rawRingBytes: this.limits.rawRingBytes,
      ...(spill ? { spill } : {}),
    });
  }

  private register(session: Session, command: Command): void {
    this.commands.set(command.id, command);
    session.commandIds.push(command.id);
    if (command.ended) this.finished.set(command.id, command);
    else command.onEnd.on(() => this.finished.set(command.id, command));
  }

  private uniqueCommandId(): string {
    for (;;) {
      const id = newCommandId(this.random);
      if (!this.commands.has(id)) return id;
    }
  }

  private async startForeground(session: Session, text: string, cwd: string | undefined): Promise<Command> {
    const id = this.uniqueCommandId();
    const terminal: CommandTerminal = {
      write: async (data) => {
        await session.lineRead(command, this.defaults.writeDeadlineMs);
        return session.write(data);
      },
      inputWaitEvidence: () => session.foregroundInputWait(command),
      kill: async ({ signal, graceMs }) => {
        const proc = session.proc;
        if (!proc) return { result: 'already_exited', survivors: [] };
        // Never started, and a program holds the terminal: that program is not the command's (a person's).
        if (command.awaitingStart && (await proc.foregroundIsOwn?.().catch(() => undefined)) === false) {
          session.abandonUnstarted(command, 'killed');
          return { result: 'killed', survivors: [] };
        }
        const report: KillReport = proc.killJob
          ? await proc.killJob({ signal, graceMs, markerId: id })
          : { result: 'killed', survivors: [] };
        // The shell itself may go on with the rest of a loop or list after its job died: interrupt it
        // like Ctrl+C would (as a signal, so a terminal left in raw mode cannot swallow it), until it
        // reports the command's end.
        for (let attempt = 0; attempt < 3 && !command.ended && session.proc; attempt++) {
          session.proc.signal('SIGINT');
          await waitForCommand(
            command,
            { pauseMs: 700, totalMs: 700, settleMs: 1e9, inputJustSent: true, progressMs: 1e9 },
            this.clock,
          );
        }
        return report;
      },
      screen: () => session.screenSnapshot(),
      addSecret: (secret) => session.addSecret(secret),
      foregroundProgram: async () => (await session.proc?.foregroundProgram?.()) ?? undefined,
      foregroundPrograms: async () => foregroundProgramsOf(session.proc),
    };
    const command = new Command({
      id,
      sessionId: session.id,
      text,
      isolated: false,
      background: false,
      log: this.newLog(id),
      clock: this.clock,
      terminal,
    });
    this.register(session, command);
    command.cwdBefore = session.cwd ?? undefined;
    await session.run(command, cwd);
    return command;
  }

  private async startIsolated(
    session: Session,
    text: string,
    cwd: string | undefined,
    background: boolean,
    heldByPerson = false,
  ): Promise<Command> {
    // The environment an isolated command loads is the one the shell snapshots after each command's end.
    await session.snapshotWritten(this.defaults.snapshotWaitMs);
    const id = this.uniqueCommandId();
    const snapshot = session.leaseSnapshot();
    const launch = session.integration.isolatedLaunch({
      commandId: id,
      text,
      cwd: cwd ?? session.cwd ?? undefined,
      envFile: snapshot.file,
      shell: session.shell,
    });
    const screen = this.screenFactory?.(session.cols, session.rows);
    const stream = new TerminalStream(session.integration.nonce, screen);
    let proc: TerminalProcess | undefined;
    let endInfo: { status: number | null; cwd: string } | undefined;
    const terminal: CommandTerminal = {
      write: (data) => {
        if (!proc)
          return Promise.reject(new ConchError(ErrorCode.COMMAND_FINISHED, `Command ${id} has finished.`));
        return proc.write(data, this.defaults.writeDeadlineMs);
      },
      inputWaitEvidence: async () => (await proc?.inputWaitEvidence?.()) ?? 'unknown',
      kill: async ({ signal, graceMs }) =>
        proc ? proc.kill({ signal, graceMs, markerId: id }) : { result: 'already_exited', survivors: [] },
      screen: async () => screen?.snapshot(),
      addSecret: (secret) => stream.redactor.add(secret),
      foregroundProgram: async () => (await proc?.foregroundProgram?.()) ?? undefined,
      foregroundPrograms: async () => foregroundProgramsOf(proc),
    };
    const command = new Command({
      id,
      sessionId: session.id,
      text,
      isolated: true,
      background,
      log: this.newLog(id),
      clock: this.clock,
      terminal,
    });
    const deliver = (pieces: ReturnType<TerminalStream['push']>) => {
      for (const piece of pieces) {
        if (piece.type === 'data') command.appendOutput(piece.bytes);
        else if (piece.marker.type === 'start' && piece.marker.commandId === id) {
          // The wrapper prints its start marker once it has loaded the environment.
          snapshot.release();
        } else if (piece.marker.type === 'end' && piece.marker.commandId === id) {
          endInfo = { status: piece.marker.status, cwd: piece.marker.cwd };
        }
      }
    };
    try {
      proc = await session.driver.spawn({
        file: launch.file,
        args: launch.args,
        cwd: undefined,
        env: { ...session.env, ...launch.env, [COMMAND_MARKER]: id },
        cols: session.cols,
        rows: session.rows,
        ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
      });
    } catch (error) {
      snapshot.release();
      screen?.dispose();
      throw ConchError.is(error)
        ? error
        : new ConchError(ErrorCode.INTERNAL, `Could not start an isolated command: ${String(error)}`, {
            cause: error,
          });
    }
    command.pid = proc.pid;
    command.heldByPerson = heldByPerson;
    this.register(session, command);
    session.announce(command, heldByPerson);
    const running = proc;
    const dataSub = running.onData((chunk) => deliver(stream.push(chunk)));
    const exitSub = running.onExit((info) => {
      deliver(stream.flush());
      snapshot.release();
      dataSub.dispose();
      exitSub.dispose();
      proc = undefined;
      running.dispose();
      // Let the screen take in the last output before it is released (it keeps that final screen).
      if (screen)
        void screen.snapshot().then(
          () => screen.dispose(),
          () => screen.dispose(),
        );
      if (info.lost) {
        command.end({ state: 'lost', exitCode: null, signal: null });
      } else if (endInfo) {
        command.end({ state: 'exited', exitCode: endInfo.status, signal: signalFromStatus(endInfo.status) });
      } else {
        command.end({
          state: info.signal || command.killRequested ? 'killed' : 'exited',
          exitCode: info.signal ? null : info.exitCode,
          signal: info.signal,
        });
      }
    });
    return command;
  }

  /**
   * The result of a waiting call in the text view, or, while a full-screen program runs (vim, less, top),
   * with `output` the compact screen (`output_view: "screen"`): its redraws are not readable as text, so
   * the text view skips them and continues from now.
   */
  private async viewResult(
    command: Command,
    outcome: { reason: CommandResult['reason']; prompt?: WaitOutcome['prompt'] },
    maxChars: number,
    spec: WaitSpec,
    vocabulary?: Vocabulary,
  ): Promise<CommandResult> {
    const result = await this.viewResultOf(command, outcome, maxChars, vocabulary);
    // The pause that applied, so that a face words "quiet for N s" without deciding the default again.
    if (result.reason === 'silence') result.pause_timeout = spec.pauseMs / 1000;
    return result;
  }

  private async viewResultOf(
    command: Command,
    outcome: { reason: CommandResult['reason']; prompt?: WaitOutcome['prompt'] },
    maxChars: number,
    vocabulary?: Vocabulary,
  ): Promise<CommandResult> {
    const screenPrompt = command.state === 'awaiting_input' && command.prompt?.kind === 'screen';
    if (command.fullScreen || screenPrompt) {
      const snapshot = await command.terminal.screen().catch(() => undefined);
      if (snapshot) {
        const result = this.result(command, outcome, maxChars, false);
        this.skipTextToNow(command);
        const screen = compactScreen(snapshot);
        result.output = screen.length > maxChars ? screen.slice(0, maxChars) : screen;
        result.output_view = 'screen';
        return result;
      }
    }
    return this.result(command, outcome, maxChars, true, vocabulary);
  }

  /** Moves the command's text cursor to the end of its log (what is on the screen now was seen). */
  private skipTextToNow(command: Command): void {
    command.cursor = command.log.cursor();
    command.redrawsAtRead = command.log.redraws;
  }

  private result(
    command: Command,
    outcome: { reason: CommandResult['reason']; prompt?: WaitOutcome['prompt'] },
    maxChars: number,
    read = true,
    vocabulary?: Vocabulary,
  ): CommandResult {
    const read_ = read
      ? command.log.readSince(command.cursor, {
          maxChars,
          maxLines: this.defaults.maxOutputLines,
          vocabulary,
        })
      : undefined;
    if (read_) {
      command.cursor = read_.next;
      command.redrawsAtRead = command.log.redraws;
    }
    const completed = command.ended;
    const result: CommandResult = {
      status: completed ? 'completed' : 'partial',
      command_id: command.id,
      session_id: command.sessionId,
      output: read_?.text ?? '',
      state: command.state,
      reason: completed ? 'exited' : outcome.reason === 'exited' ? 'silence' : outcome.reason,
      duration_ms: command.durationMs(),
      output_info: {
        bytes_total: command.log.bytesTotal,
        lines_total: command.log.linesTotal,
        truncated: read_?.truncated ?? false,
        omitted_lines: read_?.omittedLines ?? 0,
      },
    };
    if (completed) {
      result.exit_code = command.exitCode;
      result.signal = command.signal;
      const session = this.sessions.get(command.sessionId);
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
    if (command.newShell) {
      command.newShell = false;
      result.new_shell = true;
    }
    const prompt = outcome.prompt ?? (command.state === 'awaiting_input' ? command.prompt : undefined);
    if (prompt && !completed) result.prompt = prompt;
    const path = command.log.spillPath;
    if (path !== undefined) result.output_info.log_path = path;
    return result;
  }

  private pageResult(
    command: Command,
    offset: number,
    length: number,
    filter: TextPattern | undefined,
    maxChars: number,
  ): CommandResult {
    const page = command.log.page({ offset, length, maxChars, ...(filter ? { filter } : {}) });
    const result = this.result(command, { reason: command.ended ? 'exited' : 'silence' }, maxChars, false);
    result.output = page.text === '' ? page.header : `${page.header}\n${page.text}`;
    result.page = page.info;
    return result;
  }

  private waitSpec(options: WaitOptions, inputJustSent: boolean): WaitSpec {
    const pause = resolveParameter('pause_timeout', options.pause_timeout, this);
    const total = resolveParameter('total_timeout', options.total_timeout, this);
    const spec: WaitSpec = {
      pauseMs: pause * 1000,
      totalMs: total * 1000,
      settleMs: this.defaults.promptSettleMs,
      inputJustSent,
      progressMs: this.defaults.progressMs,
    };
    if (options.until !== undefined) spec.until = compileUserPattern('until', options.until);
    return spec;
  }

  private maxChars(value: number | undefined): number {
    return resolveParameter('max_output_chars', value, this);
  }

  /**
   * A session's shell, checked before anything runs: a program the host can run and, under a policy, a
   * known shell (any other program or script would run before any command is checked).
   */
  private async checkShell(shell: string, driver: Driver): Promise<void> {
    const choices = `a known shell (${[...SHELL_PROGRAMS].join(', ')}) by name or in /bin, /usr/bin or /usr/local/bin`;
    if (typeof shell !== 'string' || shell.trim() === '' || /[\u0000-\u001f\u007f]/.test(shell)) {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid shell ${JSON.stringify(shell)}.`, {
        hint: `Give ${choices}.`,
      });
    }
    if (this.policy?.active && !isKnownShell(shell)) {
      const reason = `the shell ${JSON.stringify(shell)} is not a known shell, and under a policy only known shells start sessions`;
      this.audit?.record({ kind: 'execute', input: `create_local shell=${shell}`, decision: 'deny', reason });
      throw new ConchError(ErrorCode.POLICY_DENIED, `Denied by policy: ${reason}.`, {
        hint: `Give ${choices}.`,
      });
    }
    const findProgram = driver.findProgram?.bind(driver);
    if (findProgram !== undefined && (await findProgram(shell)) === undefined) {
      const found: string[] = [];
      for (const name of SHELL_PROGRAMS) if ((await findProgram(name)) !== undefined) found.push(name);
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Invalid shell ${JSON.stringify(shell)}: no such executable program on the host. Shells found on this host: ${
          found.length > 0 ? found.join(', ') : 'none of the known ones'
        }.`,
        { hint: `Give one of the shells found, or ${choices}.` },
      );
    }
  }

  private checkEnv(env: Record<string, string>): void {
    for (const [key, value] of Object.entries(env)) {
      if (!isValidEnvName(key) || typeof value !== 'string' || value.includes('\0')) {
        throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid env entry ${JSON.stringify(key)}.`, {
          hint: `env maps variable names (${ENV_NAME_RULE}) to strings without NUL.`,
        });
      }
    }
    if (!this.policy?.active) return;
    // Under a policy, env obeys the rules for assignments (PATH, BASH_ENV, PROMPT_COMMAND … change what
    // later commands mean). The values are not echoed or audited: they may be secrets.
    for (const [key, value] of Object.entries(env)) {
      const decision = this.policy.evaluate(`${key}=${shellQuote(value)}`, { historyExpansion: false });
      const rules = decision.commands.filter((c) => c.decision === 'deny').map((c) => c.rule ?? 'policy');
      const reason =
        decision.decision === 'deny'
          ? `the env entry ${key} is denied (${[...new Set(rules)].join(', ')}): setting it changes what later commands mean`
          : `the env entry ${key} is allowed`;
      this.audit?.record({
        kind: 'execute',
        input: `create_local env ${key}=…`,
        decision: decision.decision,
        reason,
      });
      if (decision.decision === 'deny') {
        throw new ConchError(ErrorCode.POLICY_DENIED, `Denied by policy: ${reason}.`, {
          hint: 'Nothing was started. Leave the variable out of env.',
          data: { env: key },
        });
      }
    }
  }

  private checkInput(name: string, value: string): string {
    if (typeof value !== 'string') {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid ${name}: a string is expected.`);
    }
    // UTF-16 length × 3 bounds the UTF-8 size; only measure exactly near the limit.
    if (value.length * 3 > this.limits.maxInputBytes) {
      const bytes = new TextEncoder().encode(value).length;
      if (bytes > this.limits.maxInputBytes) {
        throw new ConchError(
          ErrorCode.LIMIT_REACHED,
          `${name} is ${bytes} bytes; the limit is ${this.limits.maxInputBytes} bytes per call.`,
          { hint: 'Write long scripts to a file and run the file.' },
        );
      }
    }
    return value;
  }

  private checkLiveLimit(): void {
    let live = 0;
    for (const c of this.commands.values()) if (!c.ended) live++;
    if (live >= this.limits.maxLiveCommands) {
      throw new ConchError(
        ErrorCode.LIMIT_REACHED,
        `Live command limit reached: ${live} of ${this.limits.maxLiveCommands} commands are running.`,
        {
          hint: hint`Kill finished-with background commands with ${verb('killProcess')} (${verb('listProcesses')} shows them).`,
        },
      );
    }
  }

  private checkPolicy(
    text: string,
    kind: 'execute' | 'respond' | 'send_control',
    sessionId: string,
    commandId?: string,
    secret = false,
  ): void {
    if (!this.policy?.active) {
      // No rules, nothing to decide; the audit log still sees every command.
      this.audit?.record({
        kind,
        session_id: sessionId,
        ...(commandId === undefined ? {} : { command_id: commandId }),
        input: text,
        decision: 'allow',
        reason: 'no policy rules are configured',
      });
      return;
    }
    const typed = kind !== 'execute';
    const decision = this.policy.evaluate(
      text,
      typed ? { typed: true, historyExpansion: true } : { historyExpansion: false },
    );
    this.audit?.record({
      kind,
      session_id: sessionId,
      ...(commandId === undefined ? {} : { command_id: commandId }),
      input: secret ? SECRET_WITHHELD : text,
      decision: decision.decision,
      reason: secret
        ? `${decision.decision} (the reason names the secret text, so it is withheld)`
        : decision.reason,
    });
    if (decision.decision === 'deny' && secret) {
      throw new ConchError(
        ErrorCode.POLICY_DENIED,
        'Denied by policy: the secret text, typed into a program that runs typed commands, would run a command the policy denies (details withheld so the secret is not echoed).',
        { hint: 'Nothing was typed. Secret text must not be a command the policy denies.' },
      );
    }
    if (decision.decision === 'deny') {
      const denied = decision.commands.find((c) => c.decision === 'deny');
      throw new ConchError(ErrorCode.POLICY_DENIED, `Denied by policy: ${decision.reason}`, {
        hint: hint`Nothing was run. ${verb('checkCommand')} explains the decision per sub-command.`,
        data: {
          ...(denied ? { command: denied.text, rule: denied.rule ?? null } : {}),
          decision,
        },
      });
    }
  }

  /**
   * The typed-input gate. Under a policy: text is typed only while the foreground program is itself blocked
   * reading the terminal (kernel evidence; otherwise whichever program reads next gets it); into a program
   * that runs typed commands (a shell of any name, `script`, `tmux`, `ssh` …, recognised from every process
   * of the foreground group), only whole lines are typed, each checked like `execute` when a byte submits it,
   * and keys that edit the line or recall history are refused. Secret text is checked but never audited.
   */
  private async checkTypedInput(
    command: Command,
    bytes: string,
    kind: 'respond' | 'send_control',
    secret: boolean,
  ): Promise<void> {
    if (!this.policy?.active) return;
    const shown = secret ? SECRET_WITHHELD : bytes;
    const refuse = (reason: string): never => {
      this.audit?.record({
        kind,
        session_id: command.sessionId,
        command_id: command.id,
        input: shown,
        decision: 'deny',
        reason,
      });
      throw new ConchError(ErrorCode.POLICY_DENIED, `Denied by policy: ${reason}`, {
        hint: hint`Nothing was typed. Under a policy, type whole command lines into a shell (${verb('respond')} with enter), one at a time, while it waits for input.`,
        data: { kind },
      });
    };
    const typed = typedLines(command.pendingShellInput, bytes);
    if (typed.onlySignals) {
      command.pendingShellInput = typed.pending;
      this.audit?.record({
        kind,
        session_id: command.sessionId,
        command_id: command.id,
        input: shown,
        decision: 'allow',
        reason: 'signal keys only (Ctrl+C, Ctrl+Z, Ctrl+\\)',
      });
      return;
    }
    const programs = await command.terminal.foregroundPrograms().catch(() => []);
    const name = programs[0] ?? 'the foreground program';
    const evidence = await command.terminal.inputWaitEvidence().catch(() => 'unknown' as const);
    if (evidence !== 'blocked_read' && evidence !== 'polling') {
      refuse(
        `type-ahead: ${name} is not reading the terminal (${evidence === 'no' ? 'it is busy' : 'no kernel evidence that it waits for input'}), so the text would go to whichever program reads next`,
      );
    }
    const reader = programs.find((p) => runsTypedCommands(p));
    if (reader === undefined) {
      this.audit?.record({
        kind,
        session_id: command.sessionId,
        command_id: command.id,
        input: shown,
        decision: 'allow',
        reason: `typed into ${name}, which does not run typed commands`,
      });
      return;
    }
    if (typed.refusedKey !== undefined) {
      refuse(
        `${typed.refusedKey} typed into ${reader} edits the line or recalls history after it was checked; under a policy only whole lines are typed into a shell`,
      );
    }
    for (const line of typed.lines) {
      if (line.trim() === '') continue;
      try {
        this.checkPolicy(line, kind, command.sessionId, command.id, secret);
      } catch (error) {
        // Clear what was already typed on that line (Ctrl+U), so the denied command cannot complete later.
        if (command.pendingShellInput !== '') {
          command.pendingShellInput = '';
          await command.terminal.write('\x15', this.defaults.writeDeadlineMs).catch(() => {});
        }
        throw error;
      }
    }
    command.pendingShellInput = typed.pending;
    if (typed.lines.every((line) => line.trim() === '')) {
      this.audit?.record({
        kind,
        session_id: command.sessionId,
        command_id: command.id,
        input: shown,
        decision: 'allow',
        reason: `typed into ${reader} without submitting a line: the whole line is checked when it is submitted`,
      });
    }
  }

  private forgetCommand(id: string): void {
    const command = this.commands.get(id);
    if (!command) return;
    this.commands.delete(id);
    this.finished.delete(id);
    command.log.close(!this.keepLogs);
  }

  /**
   * Drops finished commands older than the retention time or beyond the newest N finished. Oldest first,
   * stopping at the first one that stays: a call costs what it drops, not what is retained.
   */
  private prune(): void {
    const now = this.clock.now();
    for (const command of this.finished.values()) {
      const stale = now - (command.endedAt ?? now) > this.limits.retainMs;
      if (!stale && this.finished.size <= this.limits.retainFinished) break;
      this.forgetCommand(command.id);
      const session = this.sessions.get(command.sessionId);
      if (session) {
        const at = session.commandIds.indexOf(command.id);
        if (at >= 0) session.commandIds.splice(at, 1);
      }
    }
  }
}

/** What the audit log says instead of secret input. */
const SECRET_WITHHELD = '(secret input withheld)';

/** Every name the foreground process group of a terminal is known by (falls back to its leader's name). */
async function foregroundProgramsOf(proc: TerminalProcess | undefined): Promise<string[]> {
  if (!proc) return [];
  const all = await proc.foregroundPrograms?.();
  if (all !== undefined) return all;
  const one = await proc.foregroundProgram?.();
  return one === undefined ? [] : [one];
}
