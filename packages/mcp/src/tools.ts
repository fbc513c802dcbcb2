/**
 * The docs/tools.md default-profile tools: `create_local`, `list_sessions`, `close_session`, `execute`,
 * `read_output`, `respond`, `send_control`, `list_processes`, `kill_process`, `check_command`.
 *
 * The descriptions are part of the product: an agent knows only what they say. Each one says what the tool
 * does, when to use it rather than a sibling, its side effects, the result shape and what each
 * status/state/reason means for the next call; each parameter says its meaning, unit and default.
 */

import {
  type CloseSessionResult,
  KILL_SIGNALS,
  type KillResult,
  type LeanCommandResult,
  leanCommandResult,
  type PolicyDecision,
  type ProcessInfo,
  type SessionInfo,
  USER_PATTERN_MAX_CHARS,
  USER_PATTERN_SYNTAX,
} from '@conch/core';
import type { ConchService, Logger } from '@conch/service';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { serviceCall } from './call-context.js';
import {
  type CallInfo,
  renderClosed,
  renderCommandResult,
  renderCreatedSession,
  renderDecision,
  renderKill,
  renderProcesses,
  renderSessions,
} from './render.js';
import {
  CloseSessionShape,
  CommandResultShape,
  KillResultShape,
  ListProcessesShape,
  ListSessionsShape,
  PolicyDecisionShape,
  SessionSchema,
} from './schemas.js';
import { registerConchTool } from './tool-kit.js';

/** The names of the default-profile tools, in the order they are listed. */
export const DEFAULT_TOOL_NAMES = [
  'execute',
  'read_output',
  'respond',
  'send_control',
  'list_processes',
  'kill_process',
  'create_local',
  'list_sessions',
  'close_session',
  'check_command',
] as const;

/**
 * The terminal-size and label parameters every session-opening tool shares (`create_local`, `connect_ssh`),
 * with the engine's configured limits and defaults.
 */
export function sessionShapeParams(settings: Pick<ConchService, 'limits' | 'defaults'>) {
  const { limits, defaults } = settings;
  return {
    cols: z
      .number()
      .int()
      .min(1)
      .max(limits.maxCols)
      .optional()
      .meta({ default: defaults.cols })
      .describe(`Terminal width in columns. 1-${limits.maxCols}, default ${defaults.cols}.`),
    rows: z
      .number()
      .int()
      .min(1)
      .max(limits.maxRows)
      .optional()
      .meta({ default: defaults.rows })
      .describe(`Terminal height in rows. 1-${limits.maxRows}, default ${defaults.rows}.`),
    name: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('A label shown by list_sessions. Default: the session_id.'),
  };
}

/** Parameter schemas shared by several tools, built from the engine's configured limits and defaults. */
function commonParams(settings: Pick<ConchService, 'limits' | 'defaults'>) {
  const { limits, defaults } = settings;
  const maxT = limits.maxTimeoutS;
  const defaultChars = Math.min(defaults.maxOutputChars, limits.maxOutputChars);
  return {
    session_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'Session to use (an id from create_local or list_sessions). Default: the local session "default", created on first use.',
      ),
    command_id: z
      .string()
      .min(1)
      .max(200)
      .describe('The command_id returned by execute (list_processes shows all known ids).'),
    pause_timeout: z
      .number()
      .min(0)
      .max(maxT)
      .optional()
      .meta({ default: defaults.pauseTimeoutS })
      .describe(
        `Seconds of output SILENCE after which the call returns status "partial", reason "silence"; the clock restarts at every byte of output. 0 returns at once with what is buffered. Float, 0-${maxT}, default ${defaults.pauseTimeoutS}.`,
      ),
    total_timeout: z
      .number()
      .min(0)
      .max(maxT)
      .optional()
      .meta({ default: defaults.totalTimeoutS })
      .describe(
        `Seconds after which the call returns (reason "total_timeout") while output keeps STREAMING. Binds only while output arrives: a silent command returns by pause_timeout, and raising total_timeout never lengthens a silent wait. Float, 0-${maxT}, default ${defaults.totalTimeoutS}.`,
      ),
    until: z
      .string()
      .min(1)
      .max(USER_PATTERN_MAX_CHARS)
      .optional()
      .describe(
        `Regex in ${USER_PATTERN_SYNTAX}: the call returns early, reason "until_matched", when output arriving during this call matches, e.g. "listening on|ready". Default: none.`,
      ),
    max_output_chars: z
      .number()
      .int()
      .min(100)
      .max(limits.maxOutputChars)
      .optional()
      .meta({ default: defaultChars })
      .describe(
        `Most characters of output this call returns (default ${defaultChars}, at most ${limits.maxOutputChars}). Over budget the first ~20% and last ~80% are kept, plus error-looking lines from the middle, with a notice of what was omitted and how to page through it.`,
      ),
  };
}

/** What the default tools need. */
export interface DefaultToolsContext {
  server: McpServer;
  service: ConchService;
  logger: Logger;
}

function callInfo(service: ConchService, args: { pause_timeout?: number }): CallInfo {
  return {
    pauseTimeoutS: args.pause_timeout ?? service.defaults.pauseTimeoutS,
  };
}

/** The CommandResult paragraph: said once, in execute; the other command tools point to it. */
const COMMAND_RESULT_DOC =
  'Result (CommandResult, also of read_output, respond and send_control): status "completed" (exit_code, cwd) ' +
  'or "partial"; reason = why the call returned; output = the text since the previous call, cut over budget ' +
  'with a notice; past 64 KiB of output, output_info.log_path names the full log.';

/** What read_output, respond and send_control say of their result. */
const SAME_RESULT = 'Result: a CommandResult (see execute).';

/** Registers the ten default-profile tools. */
export function registerDefaultTools({ server, service, logger }: DefaultToolsContext): void {
  const p = commonParams(service);
  const { limits, defaults } = service;

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'execute',
      title: 'Run a shell command',
      description:
        'Run a shell command in a persistent terminal session (cd, export, venvs persist) and wait for it. Returns ' +
        'when it ends, or earlier as "partial" (silent for pause_timeout, streaming past total_timeout, `until` ' +
        'matched, or waiting for input). A partial command KEEPS RUNNING: follow it with read_output (never re-run ' +
        'it), answer prompts with respond, press keys with send_control, stop it with kill_process. For servers and ' +
        'watchers use background:true (returns after ~0.3 s) instead of a trailing & or nohup, whose output leaks ' +
        'into later results. In a busy session it runs isolated (its cd/export do not persist). ' +
        COMMAND_RESULT_DOC,
      input: z.strictObject({
        command: z
          .string()
          .min(1)
          .describe(
            'Shell command line(s) to run, exactly as typed at a prompt: pipes, &&, heredocs and multi-line scripts work. Up to 1 MiB.',
          ),
        session_id: p.session_id,
        pause_timeout: p.pause_timeout,
        total_timeout: p.total_timeout,
        background: z
          .boolean()
          .optional()
          .meta({ default: false })
          .describe(
            'true = run as a background process (own terminal and process group) and return after a ~0.3 s start-up probe; follow it with read_output, stop it with kill_process. Default false.',
          ),
        cwd: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Directory to run in. Foreground: as if "cd DIR" were typed first (the session stays there). Background/isolated: the process starts there. Default: the session\'s current directory.',
          ),
        until: p.until,
        max_output_chars: p.max_output_chars,
      }),
      output: CommandResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.execute(args, serviceCall(call))),
      render: (result: LeanCommandResult, args) => renderCommandResult(result, callInfo(service, args)),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'read_output',
      title: "Read a command's output",
      description:
        'More output of a command, by command_id: use it, not a new execute, to follow a partial or background ' +
        'command. Waits like execute; returns the text since the previous waiting call. offset/length page the ' +
        'full log at once, without moving that cursor (offset < 0 = the last lines); filter (RE2) returns matching ' +
        'lines, numbered. view "screen" answers at once (unless pause_timeout or until is given) with the rendered ' +
        'screen (vim, less, top); the next text read starts from then. Ended commands stay readable 30 min. ' +
        SAME_RESULT,
      input: z.strictObject({
        command_id: p.command_id,
        pause_timeout: p.pause_timeout,
        total_timeout: p.total_timeout,
        until: p.until,
        offset: z
          .number()
          .int()
          .optional()
          .describe(
            'Page the text log instead of waiting: >= 0 = absolute line number (0-based), < 0 = the last |offset| lines. Default: no paging (wait for new output).',
          ),
        length: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .optional()
          .meta({ default: 1000 })
          .describe('Lines per page when paging (offset or filter given). 1-100000, default 1000.'),
        view: z
          .enum(['text', 'screen', 'raw'])
          .optional()
          .meta({ default: 'text' })
          .describe(
            '"text" (default): readable text, ANSI removed; "screen": the current terminal screen as a terminal emulator renders it (for vim, less, htop); "raw": bytes with escape sequences kept (debugging).',
          ),
        filter: z
          .string()
          .min(1)
          .max(USER_PATTERN_MAX_CHARS)
          .optional()
          .describe(
            `Regex in ${USER_PATTERN_SYNTAX}: return only the log lines that match, each prefixed with its line number (pages like offset). Nothing is deleted. Default: none.`,
          ),
        max_output_chars: p.max_output_chars,
      }),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async (args, { call }) => leanCommandResult(await service.readOutput(args, serviceCall(call))),
      render: (result: LeanCommandResult, args) => renderCommandResult(result, callInfo(service, args)),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'respond',
      title: 'Type an answer into a running command',
      description:
        'Type text and Enter into a command that waits for input (awaiting_input: a prompt, password, REPL, ' +
        'yes/no), then wait like execute. secret:true for passwords: masked in all output and logs. For keys (ctrl+c, esc, arrows, q) use send_control. COMMAND_FINISHED if it already ' +
        `ended. ${SAME_RESULT}`,
      input: z.strictObject({
        command_id: p.command_id,
        text: z
          .string()
          .describe('The text to type (may be empty to press just Enter). Up to 1 MiB. Never logged.'),
        enter: z
          .boolean()
          .optional()
          .meta({ default: true })
          .describe('Press Enter (CR) after the text. Default true; false to type without submitting.'),
        secret: z
          .boolean()
          .optional()
          .meta({ default: false })
          .describe(
            'true for passwords/tokens: the text is never echoed, logged, audited or returned (masked as [secret] in output). Default false.',
          ),
        pause_timeout: p.pause_timeout,
        total_timeout: p.total_timeout,
        until: p.until,
      }),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.respond(args, serviceCall(call))),
      render: (result: LeanCommandResult, args) => renderCommandResult(result, callInfo(service, args)),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'send_control',
      title: 'Press keys in a running command',
      description:
        "Press keys in a running command's terminal, then wait like execute: ctrl+c to interrupt, ctrl+d for EOF, " +
        'q or space in a pager, esc/arrows/tab/f1-f12 in full-screen programs. key: one name or an array pressed ' +
        `in order; with an unknown name nothing is sent. To type words, use respond. ${SAME_RESULT}`,
      input: z.strictObject({
        command_id: p.command_id,
        key: z
          .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(256)])
          .describe(
            'A key name or an array of them: ctrl+a..ctrl+z, ctrl+[ \\ ] ^ _ @, esc, tab, shift+tab, enter, space, backspace, delete, insert, up, down, left, right, home, end, pageup, pagedown, f1..f12, alt+<char>, or one character (e.g. "q", ":").',
          ),
        pause_timeout: p.pause_timeout,
        total_timeout: p.total_timeout,
        until: p.until,
      }),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.sendControl(args, serviceCall(call))),
      render: (result: LeanCommandResult, args) => renderCommandResult(result, callInfo(service, args)),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'list_processes',
      title: 'List commands and background processes',
      description:
        'List the commands this server started (foreground, isolated, background) with command_id, pid, state ' +
        'and exit_code: to find the id of background work or see what still runs. Ended commands stay listed for ' +
        '30 min (newest 200); one that left processes running lists them as escaped_pids. Read-only.',
      input: z.strictObject({
        filter: z
          .string()
          .min(1)
          .max(1000)
          .optional()
          .describe(
            'Keep only commands whose text or command_id contains this substring (case-insensitive). Default: all.',
          ),
        session_id: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe('Keep only commands of this session. Default: every session.'),
        include_finished: z
          .boolean()
          .optional()
          .meta({ default: true })
          .describe('Include commands that have ended. Default true; false lists only running ones.'),
      }),
      output: ListProcessesShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.listProcesses(args, serviceCall(call)),
      render: (result: { processes: ProcessInfo[] }) => renderProcesses(result),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'kill_process',
      title: 'Kill a command and its process tree',
      description:
        'Stop a command and everything it started: its process group, descendants and every process carrying its ' +
        'command id (double forks, setsid daemons, & jobs; also after the command itself ended: see escaped_pids); ' +
        'SIGKILL after grace_s; reports survivors. The session stays usable. To let a program clean up, try ' +
        'send_control ctrl+c first. result: killed | already_exited | stop_unconfirmed.',
      input: z.strictObject({
        command_id: p.command_id,
        signal: z
          .enum(KILL_SIGNALS as unknown as [string, ...string[]])
          .optional()
          .meta({ default: 'SIGTERM' })
          .describe(`First signal to send: ${KILL_SIGNALS.join(', ')}. Default SIGTERM.`),
        grace_s: z
          .number()
          .min(0)
          .max(300)
          .optional()
          .meta({ default: defaults.killGraceS })
          .describe(
            `Seconds to wait after the first signal before SIGKILL. 0-300, default ${defaults.killGraceS}.`,
          ),
      }),
      output: KillResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.killProcess(args, serviceCall(call)),
      render: (result: KillResult) => renderKill(result),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'create_local',
      title: 'Open a new local shell session',
      description:
        'Open another local shell session (own cwd, env, shell) and return its session_id. Usually unnecessary: ' +
        'commands without session_id use the "default" session. Use it for separate state (directory, venv, env), ' +
        `another shell, or foreground commands side by side. Limit: ${limits.maxSessions} sessions ` +
        '(close_session frees one).',
      input: z.strictObject({
        shell: z
          .string()
          .min(1)
          .optional()
          .describe(
            `Shell program: bash, zsh or sh (path or name). Default: ${defaults.shell ?? "the user's login shell, else /bin/bash"}.`,
          ),
        cwd: z
          .string()
          .min(1)
          .optional()
          .describe(
            `Starting directory (must exist). Default: ${defaults.cwd ?? "the server's working directory"}.`,
          ),
        env: z
          .record(z.string(), z.string())
          .optional()
          .describe(
            'Extra environment variables for the session, e.g. {"NODE_ENV":"test"}. Names match [A-Za-z_][A-Za-z0-9_]*. Default: none.',
          ),
        ...sessionShapeParams(service),
      }),
      output: SessionSchema.shape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: (args, { call }) => service.createLocal(args, serviceCall(call)),
      render: (result: SessionInfo) => renderCreatedSession(result),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'list_sessions',
      title: 'List shell sessions',
      description:
        'List the shell sessions (session_id, name, state, cwd, shell, command ids). state: idle; ' +
        'busy (a foreground command runs: a new execute there runs isolated); closed (its shell exited: the next ' +
        'command gets SESSION_CLOSED, except in "default", which the next command recreates with a new shell); ' +
        'lost (connection gone). Read-only.',
      input: z.strictObject({}),
      output: ListSessionsShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.listSessions(args, serviceCall(call)),
      render: (result: { sessions: SessionInfo[] }) => renderSessions(result),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'close_session',
      title: 'Close a shell session',
      description:
        'Close a session: kill everything it started (foreground, isolated and background commands, whole trees) ' +
        'and its shell, and forget its command ids. Closing "default" resets it: the next command without ' +
        'session_id gets a fresh one.',
      input: z.strictObject({
        session_id: z
          .string()
          .min(1)
          .max(200)
          .describe('The session to close (list_sessions shows them; "default" is the default session).'),
      }),
      output: CloseSessionShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.closeSession(args, serviceCall(call)),
      render: (result: CloseSessionResult) => renderClosed(result),
    },
    logger,
  );

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'check_command',
      title: 'Check a command against the policy',
      description:
        "Ask whether the operator's command policy allows a command, without running it: before execute when " +
        'unsure, or to understand POLICY_DENIED. Returns decision allow | deny, reason, and each simple command ' +
        'found (pipelines, lists, $(...)) with its verdict and rule. With no policy everything is allowed. Read-only.',
      input: z.strictObject({
        command: z.string().min(1).describe('The command line to check, as it would be given to execute.'),
        session_id: p.session_id.describe(
          'Only checked to exist (SESSION_NOT_FOUND otherwise) and recorded in the audit log; the policy is the same in every session. Default: none.',
        ),
      }),
      output: PolicyDecisionShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.checkCommand(args, serviceCall(call)),
      render: (result: PolicyDecision) => renderDecision(result),
    },
    logger,
  );
}
