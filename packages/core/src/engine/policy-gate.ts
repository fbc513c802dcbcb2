/**
 * The policy gate: every check the command policy makes before the engine acts, and every audit record
 * that says what it decided. A session's shell and env, a command line, text and keys typed into a running
 * program, a `check_command` question and a person's take-over of a terminal all pass here, and nothing
 * else in the engine consults the policy or writes to the audit log. Without a policy the gate still
 * validates shells and env entries and records every command in the audit log.
 */

import type { Clock } from '../clock.js';
import type { Driver, InputWaitEvidence } from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { hint, verb } from '../hint.js';
import { ENV_NAME_RULE, isValidEnvName } from '../host/environment.js';
import type { SubmittedLine } from '../input/person-line.js';
import { typedLines } from '../input/typed-line.js';
import { shellQuote } from '../shell/shell-integration.js';
import { isKnownShell, runsTypedCommands, SHELL_PROGRAMS } from '../shell/shell-programs.js';
import type { Command } from './command.js';
import type { AuditEntry, AuditSink, CommandPolicy, PolicyDecision } from './policy-hook.js';

/**
 * How long typed input waits for a busy foreground program to read the terminal again before it is refused
 * as type-ahead: a shell redrawing its line after a keystroke, or a loaded machine, is busy for a moment.
 */
export const TYPE_AHEAD_GRACE_MS = 1000;

/** How often the kernel evidence is read again during {@link TYPE_AHEAD_GRACE_MS}. */
const TYPE_AHEAD_POLL_MS = 20;

/** What the audit log says instead of secret input. */
export const SECRET_WITHHELD = '(secret input withheld)';

/** The calls whose input the gate checks as command lines. */
export type CheckedInputKind = 'execute' | 'respond' | 'send_control';

/** What a person asks for when attaching to a session (see the engine's `attachTerminal`). */
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

/** The gate's decision on an attachment: whether the person's keystrokes are forwarded, and why not. */
export interface AttachAccess {
  input: boolean;
  /** Why the view is read-only (undefined when input is forwarded). */
  readOnlyReason: string | undefined;
}

/** The policy gate (see the module doc). */
export class PolicyGate {
  private readonly policy: CommandPolicy | undefined;
  private readonly audit: AuditSink | undefined;
  private readonly writeDeadlineMs: number;
  private readonly clock: Clock | undefined;

  /**
   * `writeDeadlineMs`: how long clearing a denied half-typed line (Ctrl+U) may take; `clock`: the engine's,
   * for the type-ahead grace (without one, a busy program is refused at once).
   */
  constructor(options: {
    policy?: CommandPolicy;
    audit?: AuditSink;
    writeDeadlineMs: number;
    clock?: Clock;
  }) {
    this.policy = options.policy;
    this.audit = options.audit;
    this.writeDeadlineMs = options.writeDeadlineMs;
    this.clock = options.clock;
  }

  /**
   * The kernel evidence of whether `command`'s foreground program reads the terminal; a busy one (`no`) is
   * looked at again for up to {@link TYPE_AHEAD_GRACE_MS}, until it reads.
   */
  private async readingEvidence(command: Command): Promise<InputWaitEvidence | 'unknown'> {
    const look = () => command.terminal.inputWaitEvidence().catch(() => 'unknown' as const);
    let evidence = await look();
    const clock = this.clock;
    if (clock === undefined) return evidence;
    const deadline = clock.now() + TYPE_AHEAD_GRACE_MS;
    while (evidence === 'no' && clock.now() < deadline) {
      await new Promise<void>((resolve) => clock.setTimeout(resolve, TYPE_AHEAD_POLL_MS));
      evidence = await look();
    }
    return evidence;
  }

  /** True when a policy with rules is configured (sessions then start their shells without rc files). */
  get active(): boolean {
    return this.policy?.active === true;
  }

  /**
   * A session's shell, checked before anything runs: a program the host can run and, under a policy, a
   * known shell (any other program or script would run before any command is checked).
   */
  async checkShell(shell: string, driver: Driver): Promise<void> {
    const choices = `a known shell (${[...SHELL_PROGRAMS].join(', ')}) by name or in /bin, /usr/bin or /usr/local/bin`;
    if (typeof shell !== 'string' || shell.trim() === '' || /[\u0000-\u001f\u007f]/.test(shell)) {
      throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid shell ${JSON.stringify(shell)}.`, {
        hint: `Give ${choices}.`,
      });
    }
    if (this.active && !isKnownShell(shell)) {
      const reason = `the shell ${JSON.stringify(shell)} is not a known shell, and under a policy only known shells start sessions`;
      this.record({ kind: 'execute', input: `create_local shell=${shell}`, decision: 'deny', reason });
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

  /**
   * A session's env entries: valid names and values and, under a policy, each one allowed by the rules for
   * assignments (PATH, BASH_ENV, PROMPT_COMMAND … change what later commands mean). The values are not
   * echoed or audited: they may be secrets.
   */
  checkEnv(env: Record<string, string>): void {
    for (const [key, value] of Object.entries(env)) {
      if (!isValidEnvName(key) || typeof value !== 'string' || value.includes('\0')) {
        throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid env entry ${JSON.stringify(key)}.`, {
          hint: `env maps variable names (${ENV_NAME_RULE}) to strings without NUL.`,
        });
      }
    }
    if (!this.policy?.active) return;
    for (const [key, value] of Object.entries(env)) {
      const decision = this.policy.evaluate(`${key}=${shellQuote(value)}`, { historyExpansion: false });
      const rules = decision.commands.filter((c) => c.decision === 'deny').map((c) => c.rule ?? 'policy');
      const reason =
        decision.decision === 'deny'
          ? `the env entry ${key} is denied (${[...new Set(rules)].join(', ')}): setting it changes what later commands mean`
          : `the env entry ${key} is allowed`;
      this.record({
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

  /**
   * One command line: an `execute`'s command, or a line typed into a shell and submitted (`respond`,
   * `send_control`: checked as typed, with history expansion). Recorded in the audit log (secret text as
   * {@link SECRET_WITHHELD}); a denied line throws `POLICY_DENIED` naming the denied sub-command and rule
   * (for secret text, nothing that would echo it).
   */
  checkLine(
    text: string,
    kind: CheckedInputKind,
    sessionId: string,
    commandId?: string,
    secret = false,
  ): void {
    if (!this.policy?.active) {
      // No rules, nothing to decide; the audit log still sees every command.
      this.record({
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
    this.record({
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
  async checkTypedInput(
    command: Command,
    bytes: string,
    kind: 'respond' | 'send_control',
    secret: boolean,
  ): Promise<void> {
    if (!this.policy?.active) return;
    const shown = secret ? SECRET_WITHHELD : bytes;
    const allow = (reason: string): void =>
      this.record({
        kind,
        session_id: command.sessionId,
        command_id: command.id,
        input: shown,
        decision: 'allow',
        reason,
      });
    const refuse = (reason: string): never => {
      this.record({
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
      command.holdShellInput(typed.pending);
      allow('signal keys only (Ctrl+C, Ctrl+Z, Ctrl+\\)');
      return;
    }
    const programs = await command.terminal.foregroundPrograms().catch(() => []);
    const name = programs[0] ?? 'the foreground program';
    const evidence = await this.readingEvidence(command);
    if (evidence !== 'blocked_read' && evidence !== 'polling') {
      refuse(
        `type-ahead: ${name} is not reading the terminal (${evidence === 'no' ? 'it is busy' : 'no kernel evidence that it waits for input'}), so the text would go to whichever program reads next`,
      );
    }
    const reader = programs.find((p) => runsTypedCommands(p));
    if (reader === undefined) {
      allow(`typed into ${name}, which does not run typed commands`);
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
        this.checkLine(line, kind, command.sessionId, command.id, secret);
      } catch (error) {
        // Clear what was already typed on that line (Ctrl+U), so the denied command cannot complete later.
        if (command.pendingShellInput !== '') {
          command.holdShellInput('');
          await command.terminal.write('\x15', this.writeDeadlineMs).catch(() => {});
        }
        throw error;
      }
    }
    command.holdShellInput(typed.pending);
    if (typed.lines.every((line) => line.trim() === '')) {
      allow(`typed into ${reader} without submitting a line: the whole line is checked when it is submitted`);
    }
  }

  /** `check_command`: the policy's decision on `text`, without running anything (recorded as a check). */
  explain(text: string, sessionId?: string): PolicyDecision {
    const decision = this.policy?.evaluate(text, { historyExpansion: false }) ?? {
      decision: 'allow' as const,
      reason: 'No policy is configured: every command is allowed.',
      commands: [],
    };
    this.record({
      kind: 'check',
      input: text,
      decision: decision.decision,
      reason: decision.reason,
      ...(sessionId === undefined ? {} : { session_id: sessionId }),
    });
    return decision;
  }

  /**
   * Whether a person attaching to a session may type into it. Keystrokes typed this way are not checked
   * by the policy (a person at a terminal is not the agent), so under a policy the view is read-only
   * unless `takeOver` is asked for, and `takeOver` is refused (`POLICY_DENIED`) from inside a terminal
   * conch manages, where the typist would be an agent. A take-over is recorded in the audit log. A view
   * opened to watch only (`watchOnly`) is read-only, policy or not.
   */
  attachAccess(sessionId: string, request: AttachRequest): AttachAccess {
    if (request.watchOnly)
      return { input: false, readOnlyReason: 'opened to watch only; take over to type into the session' };
    if (!this.active) return { input: true, readOnlyReason: undefined };
    if (request.takeOver && request.fromConchTerminal) {
      const reason =
        'taking over a session from inside a terminal conch manages: keystrokes typed there would come from an agent and bypass the command policy';
      this.record({
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
      this.record({
        kind: 'attach',
        session_id: sessionId,
        input: 'take over',
        decision: 'allow',
        reason: 'a person at a terminal took over the session; their keystrokes are not checked or recorded',
      });
      return { input: true, readOnlyReason: undefined };
    }
    return {
      input: false,
      readOnlyReason: 'a command policy is configured; take over explicitly to type into the session',
    };
  }

  /**
   * Records a command line a person submitted at the shell's prompt through an attached view, as theirs
   * (lines typed into a program may be secrets: those are never passed here).
   */
  recordPersonLine(sessionId: string, line: SubmittedLine): void {
    this.record({
      kind: 'attach',
      by: 'person',
      session_id: sessionId,
      input: line.text,
      decision: 'allow',
      reason: `typed by a person at the shell's prompt through conch attach (not checked by the policy)${line.exact ? '' : '; edited with keys conch does not replay, so what ran may differ'}`,
    });
  }

  private record(entry: AuditEntry): void {
    this.audit?.record(entry);
  }
}
