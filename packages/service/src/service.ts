/**
 * `ConchService`: the verbs of conch as methods, whatever the face. Each verb takes plain JSON
 * parameters (the names of docs/tools.md) and a {@link ServiceCallContext} (cancellation, progress, a way
 * to ask the person), and returns plain JSON. Nothing live leaves it: no SessionManager, Driver, Session
 * or SSH client is handed to a face. It owns the engine and its shutdown with a grace period; the
 * `connect_ssh` sequence is {@link connectSshSession}. {@link createConchService} assembles one from a
 * configuration (policy and audit, orphan reaping, the local engine).
 */

import { resolve } from 'node:path';
import {
  type ByteRead,
  type CloseSessionResult,
  type CommandResult,
  ConchError,
  type CreateLocalRequest,
  chooseSandbox,
  DEFAULT_SESSION_ID,
  type Disposable,
  type EngineDefaults,
  type EngineLimits,
  ErrorCode,
  type ExecuteRequest,
  type KillProcessRequest,
  type KillResult,
  type ListProcessesRequest,
  type PolicyDecision,
  type ProcessInfo,
  type ReadOutputRequest,
  type RespondRequest,
  type SandboxPolicy,
  type SandboxRequest,
  type SendControlRequest,
  type SessionInfo,
  SessionManager,
  type SessionManagerOptions,
  type TerminalAttachment,
  type TerminalWatcher,
} from '@conch/core';
import {
  type DelegateResult,
  type DelegateTaskInput,
  Delegator,
  findOpencode,
  OPENCODE_INSTALL_HINT,
} from '@conch/delegate';
import { createAuditLog, Policy } from '@conch/policy';
import { reapOrphans, runsUnderConch } from '@conch/pty';
import type { HostKeyPolicy } from '@conch/ssh/host-key-policies';
import type { ServiceCallContext } from './call-context.js';
import type { ResolvedConfig } from './config.js';
import {
  ContainerSessions,
  type ContainerSetup,
  type CreateContainerParams,
  locateContainerEngine,
} from './container-sessions.js';
import { createLocalEngine, type EngineGuards, type SandboxSetup } from './engine.js';
import { type Logger, silentLogger } from './logger.js';
import { sandboxHostFacts } from './sandbox-options.js';
import {
  type ConnectSshParams,
  type ConnectSshResult,
  connectSshOnDemand,
  connectSshSession,
  type SshPolicies,
  type SshServiceOptions,
  sshPolicies,
} from './ssh-connect.js';

/** Grace between SIGHUP/SIGTERM and SIGKILL for the processes killed at shutdown. */
export const SHUTDOWN_KILL_GRACE_S = 2;

/** `close_session` parameters. */
export interface CloseSessionParams {
  session_id: string;
}

/** `check_command` parameters. */
export interface CheckCommandParams {
  command: string;
  session_id?: string | undefined;
}

/** Options of {@link ConchService}. */
export interface ConchServiceOptions {
  /** The engine to serve. Give this or `engine`. */
  manager?: SessionManager;
  /** Options to build the engine from when `manager` is not given. */
  engine?: SessionManagerOptions;
  /** What the operator allows for `connectSsh` (default: every host key policy, `ask` by default). */
  ssh?: SshServiceOptions;
  /** The OpenCode delegation `delegateTask` uses (none: the service cannot delegate). Closed with the service. */
  delegator?: Delegator;
  /** Where the service logs (default: nowhere). */
  logger?: Logger;
  /** Runs at the end of {@link ConchService.close}, after the engine has shut down (spill files, driver…). */
  onClose?: () => Promise<void> | void;
  /**
   * This service replaces another one whose sessions are gone (a daemon started where an earlier daemon
   * ran): the first result in the default session says `new_shell`, as when its shell is replaced.
   */
  previousSessionsGone?: boolean;
  /** The operator's sandbox policy (default: none required, no server sandbox; docs/sandbox.md). */
  sandbox?: SandboxSetup;
  /** The container engine of `createContainer` (none: the service offers no container sessions). */
  containers?: ContainerSetup;
}

/** What a person asks for when attaching to a session (see {@link ConchService.attachTerminal}). */
export interface AttachOptions {
  /** The person explicitly asked to type into the session (`conch attach --take-over`). */
  takeOver?: boolean;
  /**
   * The person only watches (the web page until they take over): keystrokes are refused, policy or not.
   */
  watchOnly?: boolean;
  /** The attaching program's pid, as its connection reports it (absent: unknown). */
  clientPid?: number;
  /**
   * Whether the client runs inside a terminal conch manages, when the face knows (the web page's clients
   * are people's browsers); otherwise found from `clientPid` ({@link ConchService.clientInConchTerminal}).
   */
  fromConchTerminal?: boolean;
}

/** `create_local` parameters: the engine's, with the sandbox as a caller asks for it. */
export type CreateLocalParams = Omit<CreateLocalRequest, 'sandbox'> & {
  sandbox?: SandboxRequest | undefined;
};

const NO_SANDBOX: SandboxSetup = {
  policy: { rules: undefined, required: false },
  facts: (cwd) => sandboxHostFacts(cwd),
};

/** Drops keys whose value is undefined (the engine treats absent and undefined alike, but be exact). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The verbs of conch over one engine (see the module doc). */
export class ConchService {
  readonly #manager: SessionManager;
  readonly #ssh: SshPolicies;
  readonly #connect: NonNullable<SshServiceOptions['connect']>;
  readonly #delegator: Delegator | undefined;
  readonly #logger: Logger;
  readonly #onClose: (() => Promise<void> | void) | undefined;
  readonly #sandbox: SandboxSetup;
  readonly #containers: ContainerSessions | undefined;
  #closing: Promise<void> | undefined;
  /** The default session's first result still has to say that the sessions of before are gone. */
  #newShellNotice: boolean;

  constructor(options: ConchServiceOptions) {
    const manager = options.manager ?? (options.engine ? new SessionManager(options.engine) : undefined);
    if (!manager) throw new TypeError('ConchService needs a manager or engine options.');
    this.#manager = manager;
    this.#ssh = sshPolicies(options.ssh);
    this.#connect = options.ssh?.connect ?? ((connect) => connectSshOnDemand(connect, this.#logger));
    this.#delegator = options.delegator;
    this.#logger = options.logger ?? silentLogger;
    this.#onClose = options.onClose;
    this.#newShellNotice = options.previousSessionsGone === true;
    this.#sandbox = options.sandbox ?? NO_SANDBOX;
    this.#containers = options.containers ? new ContainerSessions(options.containers) : undefined;
  }

  /** True when the service offers container sessions ({@link createContainer}): an engine is configured or answers. */
  get canCreateContainers(): boolean {
    return this.#containers?.setup.offered === true;
  }

  /** Removes the containers that dead conch servers created (run in the background at start). */
  reapContainers(): Promise<void> {
    return this.#containers?.reap(this.#logger) ?? Promise.resolve();
  }

  /** The operator's sandbox policy: the server's rules, and whether every local session must be sandboxed. */
  get sandboxPolicy(): SandboxPolicy {
    return this.#sandbox.policy;
  }

  /** Refuses what would run outside the sandbox on this machine when every session must be sandboxed. */
  #refuseUnsandboxed(what: string): void {
    if (!this.#sandbox.policy.required) return;
    throw new ConchError(
      ErrorCode.POLICY_DENIED,
      `${what} is not allowed: this server requires every session to be sandboxed (--sandbox-required).`,
      { hint: 'Use local sessions (create_local); they run in the sandbox.' },
    );
  }

  /** True when the service can delegate tasks to OpenCode ({@link delegateTask}). */
  get canDelegate(): boolean {
    return this.#delegator !== undefined;
  }

  /** The engine's limits (ranges of the parameters). */
  get limits(): Readonly<EngineLimits> {
    return this.#manager.limits;
  }

  /** The engine's defaults (what an absent parameter means). */
  get defaults(): Readonly<EngineDefaults> {
    return this.#manager.defaults;
  }

  /** The host key policies `connectSsh` allows, and its default. */
  get sshPolicies(): { readonly allowed: readonly HostKeyPolicy[]; readonly defaultPolicy: HostKeyPolicy } {
    return this.#ssh;
  }

  /** Runs a command and waits for it (`execute`). */
  async execute(params: ExecuteRequest, context: ServiceCallContext = {}): Promise<CommandResult> {
    const result = await this.#manager.execute(defined(params), context);
    if (this.#newShellNotice && result.session_id === DEFAULT_SESSION_ID) {
      this.#newShellNotice = false;
      result.new_shell = true;
    }
    return result;
  }

  /** More output of a command, or a page of its log (`read_output`). */
  readOutput(params: ReadOutputRequest, context: ServiceCallContext = {}): Promise<CommandResult> {
    return this.#manager.readOutput(defined(params), context);
  }

  /** Types into a running command, then waits (`respond`). */
  respond(params: RespondRequest, context: ServiceCallContext = {}): Promise<CommandResult> {
    return this.#manager.respond(defined(params), context);
  }

  /** Presses keys in a running command, then waits (`send_control`). */
  sendControl(params: SendControlRequest, context: ServiceCallContext = {}): Promise<CommandResult> {
    return this.#manager.sendControl(defined(params), context);
  }

  /** The commands started, each ended one with the escaped processes it left running (`list_processes`). */
  listProcesses(
    params: ListProcessesRequest = {},
    _context: ServiceCallContext = {},
  ): Promise<{ processes: ProcessInfo[] }> {
    return this.#manager.listProcesses(defined(params));
  }

  /**
   * The commands started, as {@link listProcesses} lists them but at once, without asking the hosts which
   * processes escaped ended commands (the compatibility profiles find a command's pid with it).
   */
  listCommands(params: ListProcessesRequest = {}): { processes: ProcessInfo[] } {
    return this.#manager.listCommands(defined(params));
  }

  /** Kills a command and its process tree (`kill_process`). */
  killProcess(params: KillProcessRequest, _context: ServiceCallContext = {}): Promise<KillResult> {
    return this.#manager.killProcess(defined(params));
  }

  /**
   * Opens a local shell session (`create_local`), in the sandbox it asks for under the operator's policy
   * (`chooseSandbox`: absent = the server's, narrowing only under `--sandbox-required`).
   */
  async createLocal(params: CreateLocalParams = {}, _context: ServiceCallContext = {}): Promise<SessionInfo> {
    const { sandbox: asked, ...rest } = params;
    const cwd = resolve(rest.cwd ?? this.#manager.defaults.cwd ?? process.cwd());
    const sandbox = chooseSandbox(asked, this.#sandbox.policy, this.#sandbox.facts(cwd));
    return this.#manager.createLocal(defined({ ...rest, sandbox }));
  }

  /** The open sessions (`list_sessions`). */
  async listSessions(
    _params: Record<string, never> = {},
    _context: ServiceCallContext = {},
  ): Promise<{ sessions: SessionInfo[] }> {
    return { sessions: this.#manager.listSessions() };
  }

  /** Closes a session and kills what it started (`close_session`). */
  closeSession(params: CloseSessionParams, _context: ServiceCallContext = {}): Promise<CloseSessionResult> {
    return this.#manager.closeSession(params.session_id);
  }

  /** What the command policy says of a command, without running it (`check_command`). */
  async checkCommand(params: CheckCommandParams, _context: ServiceCallContext = {}): Promise<PolicyDecision> {
    return this.#manager.checkCommand(params.command, params.session_id);
  }

  /** Connects over SSH and opens a session there (`connect_ssh`; see ssh-connect.ts). */
  async connectSsh(params: ConnectSshParams, context: ServiceCallContext = {}): Promise<ConnectSshResult> {
    // An SSH session runs outside this machine's sandbox (and could reach this machine unsandboxed).
    this.#refuseUnsandboxed('connect_ssh');
    return connectSshSession(this.#manager, this.#ssh, this.#connect, params, context);
  }

  /**
   * Opens a session in a container (`create_container`): one conch creates from `image` (removed with the
   * session unless `keep`), or a running one it attaches to (`container`, left running).
   */
  async createContainer(
    params: CreateContainerParams,
    _context: ServiceCallContext = {},
  ): Promise<SessionInfo> {
    // Mounts reach this machine's files from outside the sandbox.
    this.#refuseUnsandboxed('create_container');
    if (!this.#containers) {
      throw new ConchError(
        ErrorCode.CONTAINER_ENGINE_UNREACHABLE,
        'This conch has no container engine: none was configured and none answered at its start.',
        {
          hint: 'Start Docker or Podman (podman system service), or give the engine with --docker-host or DOCKER_HOST.',
        },
      );
    }
    return this.#containers.open(this.#manager, defined(params));
  }

  /** Hands a whole coding task to OpenCode and returns its result (`delegate_task`; see `canDelegate`). */
  delegateTask(params: DelegateTaskInput, context: ServiceCallContext = {}): Promise<DelegateResult> {
    try {
      // OpenCode runs its own commands on this machine, outside any sandbox.
      this.#refuseUnsandboxed('delegate_task');
    } catch (error) {
      return Promise.reject(error);
    }
    if (!this.#delegator) {
      return Promise.reject(
        new ConchError(ErrorCode.DELEGATE_UNAVAILABLE, 'This conch cannot delegate: no OpenCode was found.', {
          hint: OPENCODE_INSTALL_HINT,
        }),
      );
    }
    return this.#delegator.delegate(params, context);
  }

  /** A command's output as bytes from an absolute byte offset, without waiting (the byte-stream profiles). */
  readBytes(commandId: string, fromByte: number): ByteRead {
    return this.#manager.readBytes(commandId, fromByte);
  }

  /** Follows a command's output as it arrives, from an absolute byte offset (`conch attach` of a command). */
  followOutput(commandId: string, fromByte: number, listener: (read: ByteRead) => void): Disposable {
    return this.#manager.followOutput(commandId, fromByte, listener);
  }

  /**
   * A person's live view of a session's terminal (`conch attach`). `clientPid` is the attaching program's
   * process as its connection reports it: one inside a terminal conch manages is an agent, whose take-over
   * the engine refuses under a policy, and so is a client that does not say which process it is.
   */
  async attachTerminal(
    sessionId: string,
    viewer: TerminalWatcher,
    request: AttachOptions = {},
  ): Promise<TerminalAttachment> {
    const fromConchTerminal =
      request.fromConchTerminal ?? (await this.clientInConchTerminal(request.clientPid));
    return this.#manager.attachTerminal(sessionId, viewer, {
      takeOver: request.takeOver === true,
      watchOnly: request.watchOnly === true,
      fromConchTerminal,
    });
  }

  /**
   * Whether a person's client runs inside a terminal conch manages (an agent's command), from the pid it
   * says it has, by the host's process facts. A client that does not say which process it is could be
   * anything, and counts as inside.
   */
  async clientInConchTerminal(clientPid: number | undefined): Promise<boolean> {
    return clientPid === undefined || (await runsUnderConch(clientPid));
  }

  /**
   * Kills every process the engine started (SIGKILL after at most `killGraceS`, default
   * {@link SHUTDOWN_KILL_GRACE_S}) while OpenCode stops alongside, then runs `onClose`. Idempotent: later
   * calls return the same promise.
   */
  close(killGraceS: number = SHUTDOWN_KILL_GRACE_S): Promise<void> {
    this.#closing ??= (async () => {
      // OpenCode stops alongside the engine, not after it, so both fit in a shutdown deadline.
      const opencodeStopped = this.#delegator
        ?.close()
        .catch((error: unknown) => this.#logger.warn('stopping OpenCode failed', { error: String(error) }));
      // Shutdown must fit in a deadline: shorten the kill grace of the engine's final kills.
      this.#manager.defaults.killGraceS = Math.min(this.#manager.defaults.killGraceS, killGraceS);
      await this.#manager
        .shutdown()
        .catch((error: unknown) => this.#logger.error('engine shutdown failed', { error: String(error) }));
      if (this.#onClose) {
        await Promise.resolve()
          .then(this.#onClose)
          .catch((error: unknown) => this.#logger.error('cleanup failed', { error: String(error) }));
      }
      await opencodeStopped;
    })();
    return this.#closing;
  }
}

/** The policy (from `--allow`/`--deny`/`--policy-file`/the config file) and the audit log of a config. */
export function defaultGuards(config: ResolvedConfig): EngineGuards {
  return {
    policy: new Policy(config.policy),
    ...(config.auditLog === undefined ? {} : { audit: createAuditLog(config.auditLog) }),
  };
}

/** Options of {@link createConchService}. */
export interface CreateServiceOptions {
  /** The command policy and audit sink (default: {@link defaultGuards} of the config). */
  guards?: EngineGuards;
  /** Reap what a dead conch left: its directories at once, its processes in the background (default true). */
  reap?: boolean;
  /** Offer `delegateTask` when OpenCode can be found or `--opencode-url` is given (default true). */
  delegate?: boolean;
  /** Runs after the engine's own cleanup at close (e.g. stopping what a face started). */
  onClose?: () => Promise<void> | void;
  /** Offer `createContainer` when an engine is configured or answers at a default place (default true). */
  containers?: boolean;
  /** See {@link ConchServiceOptions.previousSessionsGone}. */
  previousSessionsGone?: boolean;
}

/**
 * Assembles the service a process serves: the policy and audit log of the config, the orphans of a dead
 * instance reaped (its processes in the background), the local engine, and the operator's SSH settings. Throws for a malformed policy rule.
 */
export async function createConchService(
  config: ResolvedConfig,
  logger: Logger,
  options: CreateServiceOptions = {},
): Promise<ConchService> {
  const guards = options.guards ?? defaultGuards(config);
  if (guards.policy?.active) {
    logger.info('command policy active', {
      allow: config.policy.allow.length,
      deny: config.policy.deny.length,
    });
  }
  if (options.reap !== false) {
    // The dead instances' directories are removed now; their processes are found (every process's environment
    // read) and killed in the background, so that the first call does not wait for it.
    reapOrphans().then(
      (reaped) => {
        if (reaped > 0) logger.info('reaped processes left by a dead conch', { count: reaped });
      },
      (error: unknown) => logger.warn('reaping orphans failed', { error: String(error) }),
    );
  }
  const engine = createLocalEngine(config, logger, guards);
  if (config.sandbox.request !== undefined) {
    logger.info('local sessions are sandboxed', {
      required: config.sandbox.required,
      network: engine.sandbox.policy.rules?.network,
    });
  }
  const delegator = options.delegate === false ? undefined : opencodeDelegator(config.opencode, logger);
  const containers = options.containers === false ? undefined : await locateContainerEngine(config, logger);
  const service = new ConchService({
    manager: engine.manager,
    ...(delegator ? { delegator } : {}),
    ssh: {
      allowedPolicies: config.ssh.allowedHostKeyPolicies,
      defaultPolicy: config.ssh.defaultHostKeyPolicy,
    },
    logger,
    ...(options.previousSessionsGone ? { previousSessionsGone: true } : {}),
    sandbox: engine.sandbox,
    ...(containers ? { containers } : {}),
    onClose: async () => {
      await engine.dispose();
      await options.onClose?.();
    },
  });
  if (options.reap !== false && service.canCreateContainers) void service.reapContainers();
  return service;
}

/**
 * The OpenCode delegation for these settings, or undefined when there is no OpenCode to delegate to: the one
 * place that decides whether `delegate_task` is offered (an `opencode` binary at `--opencode-bin`, on PATH, or
 * from an `opencode-ai` package installed next to conch; or an OpenCode server at `--opencode-url`).
 */
export function opencodeDelegator(
  opencode: { url?: string | undefined; bin?: string | undefined },
  logger: Logger,
): Delegator | undefined {
  if (opencode.url === undefined && findOpencode(opencode.bin) === undefined) {
    logger.info('delegate_task not offered: no opencode binary found (see --opencode-bin, --opencode-url)');
    return undefined;
  }
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  return new Delegator({
    ...(opencode.url === undefined ? {} : { url: opencode.url }),
    ...(opencode.url !== undefined && password !== undefined ? { password } : {}),
    ...(opencode.bin === undefined ? {} : { bin: opencode.bin }),
    onLog: (line) => logger.debug('opencode', { line }),
  });
}
