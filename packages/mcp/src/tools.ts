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
  type KillResult,
  type LeanCommandResult,
  leanCommandResult,
  type PolicyDecision,
  type ProcessInfo,
  type SessionInfo,
  type SessionManager,
} from '@conch/core';
import type { Logger } from '@conch/service';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { zodShapeFor } from './parameter-schemas.js';
import {
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

/** What the default tools need. */
export interface DefaultToolsContext {
  server: McpServer;
  manager: SessionManager;
  logger: Logger;
}

/** Drops keys whose value is undefined (the engine treats absent and undefined alike, but be exact). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The CommandResult paragraph: said once, in execute; the other command tools point to it. */
const COMMAND_RESULT_DOC =
  'Result (CommandResult, also of read_output, respond and send_control): status "completed" = the command ended (exit_code, signal; cwd for foreground commands) or "partial" = still running; ' +
  'reason = why the call returned: exited | silence | total_timeout | until_matched | awaiting_input (see prompt.kind) | cancelled | background; ' +
  'state = running | awaiting_input | exited | killed | lost; output = the text that arrived since the previous waiting call for this command ' +
  '(ANSI removed; over-budget output is cut with a notice and output_info; past 64 KiB of output, output_info.log_path names the full log).';

/** What read_output, respond and send_control say of their result. */
const SAME_RESULT = 'Result: a CommandResult, as described for execute.';

/** Registers the ten default-profile tools. */
export function registerDefaultTools({ server, manager, logger }: DefaultToolsContext): void {
  const { limits } = manager;

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'execute',
      title: 'Run a shell command',
      description:
        'Run a shell command in a persistent terminal session (like typing it into a terminal tab: cd, export, ' +
        'functions and venvs persist between calls) and wait for it. Returns as soon as it ends, or earlier as ' +
        '"partial" when output goes silent for pause_timeout, keeps streaming past total_timeout, matches `until`, ' +
        'or the program waits for input. A partial command KEEPS RUNNING: follow it with read_output (never re-run ' +
        'it), answer prompts with respond, press keys (ctrl+c, q, esc) with send_control, stop it with kill_process. ' +
        'background:true is for servers and watchers: returns after ~0.3 s with reason "background"; use it instead of a ' +
        'trailing & or nohup (a & job keeps writing into the session and its output leaks into the next results). If the session ' +
        "is busy with another command, this one runs isolated (own process, the session's cwd and env; its cd/export " +
        'do not persist; isolated:true). Without session_id it runs in the "default" session. Side effects: runs any ' +
        `program with this user's rights; a policy may deny it (POLICY_DENIED, nothing ran). ${COMMAND_RESULT_DOC}`,
      input: z.strictObject(zodShapeFor('execute', manager)),
      output: CommandResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await manager.execute(defined(args), call)),
      render: (result: LeanCommandResult) => renderCommandResult(result),
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
        'Get more output of a command started by execute, by command_id, without sending it anything. Use this, ' +
        'not a new execute, to follow a "partial" or background command: it waits by the same rules as execute ' +
        '(pause_timeout of silence, total_timeout while streaming, until, prompt detection) and returns the text ' +
        'that arrived since the previous waiting call. Paging: with offset (and length) it returns lines of the full log at once ' +
        'without waiting and without moving that cursor (offset >= 0: absolute 0-based line; ' +
        'offset < 0: the last |offset| lines), plus `page`; filter (an RE2 regex) returns only matching lines, numbered, the same way. ' +
        'view "screen" answers at once (unless pause_timeout or until is given) with the terminal screen as rendered (`screen`: rows, cursor, alt_screen), and the next text read starts from then: use it for ' +
        'full-screen programs (vim, less, htop, menus); view "raw" keeps escape sequences. Works on ended commands ' +
        `too (logs are kept 30 min, newest 200). Read-only. ${SAME_RESULT}`,
      input: z.strictObject(zodShapeFor('read_output', manager)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async (args, { call }) => leanCommandResult(await manager.readOutput(defined(args), call)),
      render: (result: LeanCommandResult) => renderCommandResult(result),
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
        'Type text into a running command that waits for input, then wait like execute. Use it when a result says ' +
        'state "awaiting_input" (a prompt, password, REPL ">>> ", yes/no question) or a program reads stdin. Sends ' +
        "text followed by Enter (enter:false types without Enter, e.g. text in vim's insert mode). secret:true for " +
        'passwords and tokens: the text is masked in all output, results and logs. Use send_control instead for ' +
        'keys (ctrl+c, esc, arrows, tab, q in a pager). Side effects: the program acts on the input. Errors: ' +
        'COMMAND_FINISHED if the command already ended (start a new one with execute), COMMAND_NOT_FOUND. ' +
        SAME_RESULT,
      input: z.strictObject(zodShapeFor('respond', manager)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await manager.respond(defined(args), call)),
      render: (result: LeanCommandResult) => renderCommandResult(result),
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
        "Press keys in a running command's terminal, like a person at the keyboard, then wait like execute. Use it " +
        'to interrupt (ctrl+c: the program usually ends with exit_code 130 / signal SIGINT), send EOF (ctrl+d), ' +
        'leave a pager (q) or page on (space), drive full-screen programs (esc, arrows, tab, enter, f1-f12), and ' +
        'answer "press any key". Use respond instead to type words or answers. key is one name or an array pressed ' +
        'in order; names are case-insensitive, "-" = "+", "C-x" and "^X" mean ctrl+x, a single character is typed ' +
        'as is. An unknown name fails with INVALID_ARGUMENT listing the valid ones, and nothing is sent. ' +
        SAME_RESULT,
      input: z.strictObject(zodShapeFor('send_control', manager)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await manager.sendControl(defined(args), call)),
      render: (result: LeanCommandResult) => renderCommandResult(result),
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
        'List the commands this server started (foreground, isolated and background) with command_id, session, ' +
        'command text, pid, state (running | awaiting_input | exited | killed | lost), exit_code, signal, duration ' +
        'and output size. Use it to find the command_id of background work, to see what is still running before ' +
        'kill_process, or to recover an id. Ended commands stay listed (and readable with read_output) for 30 ' +
        'minutes, newest 200. An ended command that left processes running (a setsid daemon, a & job) lists their ' +
        'pids as escaped_pids; kill_process on its command_id kills them. Read-only. Result: { processes: Process[] }.',
      input: z.strictObject(zodShapeFor('list_processes', manager)),
      output: ListProcessesShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args) => manager.listProcessesWithEscapees(defined(args)),
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
        'Stop a command and everything it started: signals its process group, every descendant, and every process ' +
        'that carries its command id in the environment (double forks, setsid daemons, & jobs; also after the command ' +
        'itself ended: see escaped_pids in list_processes), escalates to SIGKILL after grace_s, reaps them, and ' +
        'reports survivors. Works on foreground commands too (the session shell stays usable). To interrupt the way a person would (and let ' +
        'the program clean up), prefer send_control ctrl+c first. Result: result "killed"; "already_exited" (it ' +
        'had ended: exit_code and signal are its own); "stop_unconfirmed" (some pids in survivors outlived SIGKILL). ' +
        'The command_id stays readable with read_output.',
      input: z.strictObject(zodShapeFor('kill_process', manager)),
      output: KillResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (args) => manager.killProcess(defined(args)),
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
        'Open a new local shell session: a separate persistent terminal (own cwd, environment, shell history) on ' +
        'this machine, and return its session_id. Usually unnecessary: commands without session_id run in the ' +
        '"default" session. Create one to keep separate state (another project directory, a venv, env vars), to ' +
        `use another shell, or to run foreground commands side by side. Limit: ${limits.maxSessions} sessions ` +
        '(LIMIT_REACHED; close_session frees one). Result: Session { session_id, name, state, cwd, shell, pid, ... }.',
      input: z.strictObject(zodShapeFor('create_local', manager)),
      output: SessionSchema.shape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: (args) => manager.createLocal(defined(args)),
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
        'List the open shell sessions with session_id, name, kind, state (idle = ready; busy = a foreground ' +
        'command runs, so a new execute there runs isolated; closed = its shell exited: the next command there gets ' +
        'SESSION_CLOSED, except in "default", which the next command recreates with a new shell; lost = connection gone), ' +
        'cwd, shell, pid, foreground_command_id and command_ids. The "default" session appears after its first use. Read-only. Result: { sessions: Session[] }.',
      input: z.strictObject(zodShapeFor('list_sessions', manager)),
      output: ListSessionsShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: () => ({ sessions: manager.listSessions() }),
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
        'Close a session: kill every process it started (its foreground command, isolated and background ' +
        'commands, whole process trees) and its shell, then forget it and its command ids. Use it when done ' +
        'with a session from create_local, or to reset the "default" session (it is recreated fresh on the next ' +
        'command without session_id). Result: { session_id, closed: true, killed_command_ids }.',
      input: z.strictObject(zodShapeFor('close_session', manager)),
      output: CloseSessionShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (args) => manager.closeSession(args.session_id),
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
        "Ask whether the operator's command policy would allow a command, without running anything. Use it " +
        'before execute when unsure, or to understand a POLICY_DENIED error. Result (PolicyDecision): decision ' +
        '"allow" | "deny", reason, and commands: every simple command found in the input (pipelines, lists, ' +
        'subshells, $(...)) with its own decision and the rule that decided it. With no policy configured every ' +
        'command is allowed. Read-only.',
      input: z.strictObject(zodShapeFor('check_command', manager)),
      output: PolicyDecisionShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args) => manager.checkCommand(args.command, args.session_id),
      render: (result: PolicyDecision) => renderDecision(result),
    },
    logger,
  );
}
