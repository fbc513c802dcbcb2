/**
 * The engine: sessions, commands and the calls of docs/tools.md over injected drivers and an injected clock.
 * Faces (MCP server, CLI) validate and render; everything that a call means happens here. This module
 * keeps the sessions and walks each call through the rooms that decide it: the policy gate
 * (policy-gate.ts), the launcher (command-launcher.ts), the command registry (command-registry.ts), the
 * waiter (waiter.ts), the result builders (command-result.ts) and a person's view (terminal-attachment.ts).
 */

import type { Clock } from '../clock.js';
import type {
  Disposable,
  Driver,
  SandboxLaunch,
  ScreenFactory,
  SpillStore,
  TerminalProcess,
} from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { hint, verb } from '../hint.js';
import { SESSION_MARKER } from '../host/markers.js';
import { normalizeSignal } from '../host/signals.js';
import { encodeKeys } from '../input/key-map.js';
import { ShellIntegration, shellKindOf } from '../shell/shell-integration.js';
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
import type { Command } from './command.js';
import { CommandLauncher } from './command-launcher.js';
import { CommandRegistry } from './command-registry.js';
import {
  commandResult,
  pageResult,
  type ResultBudget,
  rawViewResult,
  screenViewResult,
  textViewResult,
} from './command-result.js';
import { addEscapedPids } from './escaped-processes.js';
import { cryptoRandomBytes, newNonce, newSessionId, type RandomBytes } from './ids.js';
import { DEFAULT_ENGINE_DEFAULTS, DEFAULT_LIMITS, type EngineDefaults, type EngineLimits } from './limits.js';
import { checkDirectoryParameter, type ParameterContext, resolveParameter } from './parameters.js';
import { type AttachRequest, PolicyGate } from './policy-gate.js';
import type { AuditSink, CommandPolicy, PolicyDecision } from './policy-hook.js';
import type {
  CreateLocalRequest,
  ExecuteRequest,
  KillProcessRequest,
  ListProcessesRequest,
  OpenSessionRequest,
  ReadOutputRequest,
  RespondRequest,
  SendControlRequest,
} from './requests.js';
import { Session, type TerminalWatcher } from './session.js';
import { attachTerminal, type TerminalAttachment } from './terminal-attachment.js';
import { compileUserPattern } from './user-pattern.js';
import { endOnlyWait, type WaitSpec, waitForCommand } from './waiter.js';

/** Grace between the polite signal and SIGKILL when a session closes or the server shuts down. */
const CLOSE_GRACE_MS = 2000;

/** The id and name of the session used when a command names none. */
export const DEFAULT_SESSION_ID = 'default';

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

/** The engine (see the module doc). */
export class SessionManager implements ParameterContext {
  readonly clock: Clock;
  readonly limits: EngineLimits;
  readonly defaults: EngineDefaults;
  private readonly localDriver: Driver | undefined;
  private readonly screenFactory: ScreenFactory | undefined;
  private readonly random: RandomBytes;
  private readonly gate: PolicyGate;
  private readonly sessions = new Map<string, Session>();
  private readonly commands: CommandRegistry;
  private readonly launcher: CommandLauncher;
  private readonly opening = new Map<string, Promise<Session>>();
  /** Ids of the sessions being opened right now (they count against the session limit). */
  private readonly openingIds = new Set<string>();
  private shuttingDown = false;

  constructor(options: SessionManagerOptions) {
    this.clock = options.clock;
    this.localDriver = options.localDriver;
    this.screenFactory = options.screen;
    this.random = options.random ?? cryptoRandomBytes;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.defaults = { ...DEFAULT_ENGINE_DEFAULTS, ...options.defaults };
    this.gate = new PolicyGate({
      policy: options.policy,
      audit: options.audit,
      writeDeadlineMs: this.defaults.writeDeadlineMs,
      clock: this.clock,
    });
    this.commands = new CommandRegistry({
      clock: this.clock,
      limits: this.limits,
      random: this.random,
      spill: options.spill,
      keepLogs: options.keepLogs === true,
      sessions: this.sessions,
    });
    this.launcher = new CommandLauncher({
      clock: this.clock,
      defaults: this.defaults,
      screenFactory: this.screenFactory,
      registry: this.commands,
    });
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
    if (request.env !== undefined) this.gate.checkEnv(request.env);
    if (request.shell !== undefined) await this.gate.checkShell(request.shell, driver);
    const id = request.id ?? this.uniqueSessionId();
    const shell = request.shell ?? this.defaults.shell ?? (await driver.defaultShell());
    const shellKind = shellKindOf(shell);
    const integration = new ShellIntegration(shellKind, newNonce(this.random));
    const noRc = this.gate.active;
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
    this.commands.prune();
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
   * A person's live view of a session's terminal (`conch attach`, see terminal-attachment.ts). The agent's
   * commands keep working during and after. Keystrokes typed this way are not checked by the command
   * policy (a person at a terminal is not the agent), so under a policy the view is read-only unless
   * `takeOver` is asked for, and `takeOver` is refused (`POLICY_DENIED`) from inside a terminal conch
   * manages (policy-gate.ts).
   */
  attachTerminal(
    sessionId: string,
    viewer: TerminalWatcher,
    request: AttachRequest = {},
  ): TerminalAttachment {
    return attachTerminal(this.getSession(sessionId), viewer, request, this.gate, this.limits);
  }

  /** `close_session`: kills every process of the session and removes it. */
  async closeSession(sessionId: string): Promise<CloseSessionResult> {
    const session = this.getSession(sessionId);
    const killed: string[] = [];
    // docs/sessions.md: everything is gone within 5 s — a short grace, then SIGKILL.
    const graceMs = Math.min(this.defaults.killGraceS * 1000, CLOSE_GRACE_MS);
    const live = this.commands.ofSession(session).filter((c) => !c.ended);
    await Promise.all(
      live
        .filter((c) => c.isolated)
        .map(async (c) => {
          c.requestKill();
          killed.push(c.id);
          await c.terminal.kill({ signal: 'SIGTERM', graceMs }).catch(() => undefined);
        }),
    );
    if (session.foreground && !session.foreground.ended) {
      session.foreground.requestKill();
      killed.push(session.foreground.id);
    }
    await session.close(graceMs);
    for (const c of live) if (!c.ended) c.end({ state: 'killed', exitCode: null, signal: 'SIGTERM' });
    this.sessions.delete(session.id);
    this.commands.forget(session.commandIds);
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
    const budget = this.budget(request.max_output_chars, context);
    const background = resolveParameter('background', request.background, this);
    // The policy decides before anything happens, even before the default session is created.
    this.gate.checkLine(text, 'execute', request.session_id ?? DEFAULT_SESSION_ID);
    const session = await this.resolveSession(request.session_id);
    this.commands.prune();
    this.commands.checkLiveLimit();
    // Typed into the shell only when it waits at an empty prompt, whoever else uses it (terminal-busy.ts).
    const turn = background ? undefined : await session.takeTurn();
    let command: Command;
    try {
      if (turn?.free) command = await this.launcher.startForeground(session, text, request.cwd);
      else {
        turn?.release();
        command = await this.launcher.startIsolated(
          session,
          text,
          request.cwd,
          background,
          turn?.byPerson === true,
        );
      }
    } finally {
      turn?.release();
    }
    if (session.newShellNotice) {
      session.newShellNotice = false;
      command.markNewShell();
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
      return commandResult(command, { reason }, { ...budget, session });
    }
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return textViewResult(command, outcome, { ...budget, session }, spec.pauseMs);
  }

  /** `read_output`: waits for more output, or pages through the log when `offset` is given. */
  async readOutput(request: ReadOutputRequest, context: CallContext = {}): Promise<CommandResult> {
    const command = this.commands.get(request.command_id);
    const budget = this.budget(request.max_output_chars, context, command);
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
      return pageResult(command, { offset, length, filter }, budget);
    }
    const spec = this.waitSpec(request, false);
    // A screen read shows the screen as it is now; it waits only when asked to.
    if (view === 'screen' && request.pause_timeout === undefined && request.until === undefined) {
      spec.pauseMs = 0;
    }
    const outcome = await waitForCommand(command, spec, this.clock, context);
    if (view === 'text') return textViewResult(command, outcome, budget, spec.pauseMs);
    if (view === 'raw') return rawViewResult(command, outcome, budget);
    return screenViewResult(command, outcome, budget);
  }

  /**
   * A command's raw output from the absolute byte offset `fromByte` (0 = its first byte), without
   * waiting: the byte positions never shift (they count every byte the command ever printed), so a
   * cursor kept by a caller stays valid however much is printed later. Bytes older than the raw ring
   * are reported as dropped instead. Non-destructive: the same range can be read again.
   */
  readBytes(commandId: string, fromByte: number): ByteRead {
    const command = this.commands.get(commandId);
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
    const command = this.commands.get(commandId);
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
    const command = this.commands.getLive(request.command_id);
    const text = this.checkInput('text', request.text);
    const spec = this.waitSpec(request, true);
    const enter = resolveParameter('enter', request.enter, this);
    const secret = resolveParameter('secret', request.secret, this);
    const bytes = enter ? `${text}\r` : text;
    await this.gate.checkTypedInput(command, bytes, 'respond', secret);
    if (secret) command.terminal.addSecret(text);
    command.markInputSent();
    await command.terminal.write(bytes, this.defaults.writeDeadlineMs);
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return textViewResult(command, outcome, this.budget(undefined, context, command), spec.pauseMs);
  }

  /** `send_control`: presses keys in a running command's terminal, then waits. */
  async sendControl(request: SendControlRequest, context: CallContext = {}): Promise<CommandResult> {
    const command = this.commands.getLive(request.command_id);
    const bytes = encodeKeys(request.key, { applicationCursor: command.log.applicationCursor });
    const spec = this.waitSpec(request, true);
    await this.gate.checkTypedInput(command, bytes, 'send_control', false);
    command.markInputSent();
    await command.terminal.write(bytes, this.defaults.writeDeadlineMs);
    const outcome = await waitForCommand(command, spec, this.clock, context);
    return textViewResult(command, outcome, this.budget(undefined, context, command), spec.pauseMs);
  }

  /**
   * The commands started, as `list_processes` selects them, at once: without asking the hosts which
   * processes ended commands left running (no `escaped_pids`; see {@link listProcesses}).
   */
  listCommands(request: ListProcessesRequest = {}): { processes: ProcessInfo[] } {
    const includeFinished = resolveParameter('include_finished', request.include_finished, this);
    const sessionId = request.session_id === undefined ? undefined : this.getSession(request.session_id).id;
    return {
      processes: this.commands.list({
        includeFinished,
        ...(request.filter === undefined ? {} : { filter: request.filter }),
        ...(sessionId === undefined ? {} : { sessionId }),
      }),
    };
  }

  /**
   * `list_processes`: the commands started, each ended one with the escaped processes it left running
   * (live processes carrying its id) as `escaped_pids` (each session's host scanned until the answer
   * settles, see escaped-processes.ts; a host that cannot tell adds none).
   */
  async listProcesses(request: ListProcessesRequest = {}): Promise<{ processes: ProcessInfo[] }> {
    const { processes } = this.listCommands(request);
    await addEscapedPids(processes, (sessionId) => this.sessions.get(sessionId)?.proc, this.clock);
    return { processes };
  }

  /** `kill_process`: kills a command's whole process tree. */
  async killProcess(request: KillProcessRequest): Promise<KillResult> {
    const command = this.commands.get(request.command_id);
    // Case and the SIG prefix are free ("term" = "SIGTERM"); the rule names the valid signals.
    const given =
      request.signal === undefined ? undefined : (normalizeSignal(request.signal) ?? request.signal);
    const normalized = resolveParameter('signal', given, this);
    const graceS = resolveParameter('grace_s', request.grace_s, this);
    if (command.ended) {
      // The command has ended, but what it left behind (a setsid daemon, a `&` job) still carries its id:
      // kill that, whatever became of the command's own process.
      const proc = this.sessions.get(command.sessionId)?.proc;
      const report = proc?.killEscaped
        ? await proc.killEscaped({ signal: normalized, graceMs: graceS * 1000, commandId: command.id })
        : { result: 'already_exited' as const, survivors: [] };
      return {
        command_id: command.id,
        result: report.result,
        exit_code: command.exitCode,
        signal: command.signal,
        survivors: report.survivors,
      };
    }
    command.requestKill();
    const report = await command.terminal.kill({ signal: normalized, graceMs: graceS * 1000 });
    if (!command.ended) {
      // The tree is gone but no end was reported yet (e.g. a foreground job whose shell prompt is
      // still being drawn): wait briefly for the marker, then end it ourselves.
      await waitForCommand(command, endOnlyWait(2000), this.clock);
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
    return this.gate.explain(text, sessionId);
  }

  /** Kills everything every session started and closes them (server shutdown). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.allSettled([...this.sessions.keys()].map((id) => this.closeSession(id)));
    for (const c of this.commands.all()) {
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
        this.commands.forget(existing.commandIds);
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

  /** How much output a result may carry: `max_output_chars` resolved, the line cap, the face's words. */
  private budget(maxOutputChars: number | undefined, context: CallContext, command?: Command): ResultBudget {
    const session = command === undefined ? undefined : this.sessions.get(command.sessionId);
    return {
      maxChars: resolveParameter('max_output_chars', maxOutputChars, this),
      maxLines: this.defaults.maxOutputLines,
      ...(context.vocabulary === undefined ? {} : { vocabulary: context.vocabulary }),
      ...(session === undefined ? {} : { session }),
    };
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
}
