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
  retentionTime,
  type SessionInfo,
} from '@conch/core';
import type { ConchService, Logger } from '@conch/service';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { serviceCall } from './call-context.js';
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
  service: ConchService;
  logger: Logger;
}

/** The CommandResult paragraph: said once, in execute; the other command tools point to it. */
const COMMAND_RESULT_DOC =
  'Result (CommandResult): status "completed" (exit_code, cwd) ' +
  'or "partial"; reason = why the call returned; output = the text since the previous call, cut over budget ' +
  'with a notice; past 64 KiB of output, output_info.log_path names the full log.';

/** What read_output, respond and send_control say of their result. */
const SAME_RESULT = 'Result: a CommandResult (see execute).';

/** Registers the ten default-profile tools. */
export function registerDefaultTools({ server, service, logger }: DefaultToolsContext): void {
  const { limits } = service;

  // ------------------------------------------------------------------------------------------------
  registerConchTool(
    server,
    {
      name: 'execute',
      title: 'Run a shell command',
      description:
        'Run a shell command in a persistent terminal session (cd, export, venvs persist) and wait for it. Returns ' +
        'when it ends, or earlier as "partial" (silence, total_timeout, `until`, or a prompt). A partial command KEEPS RUNNING: follow it with read_output (never re-run ' +
        'it), answer prompts with respond, press keys with send_control, stop it with kill_process. For servers and ' +
        'watchers use background:true (returns after ~0.3 s) instead of a trailing & or nohup, whose output leaks ' +
        'into later results. In a busy session (a command, or a person at its terminal) it runs isolated (its cd/export do not persist). ' +
        COMMAND_RESULT_DOC,
      input: z.strictObject(zodShapeFor('execute', service)),
      output: CommandResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.execute(args, serviceCall(call))),
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
        'More output of a command: use it, not a new execute, to follow a partial or background ' +
        'command. Waits like execute; returns the text since the previous waiting call. offset/length page the ' +
        'full log at once, without moving that cursor (offset < 0 = the last lines); filter (RE2) returns matching ' +
        'lines, numbered. view "screen" answers at once (unless pause_timeout or until is given) with the rendered ' +
        `screen (vim, less, top); the next text read starts from then. Ended commands stay readable ${retentionTime(limits)}. ` +
        SAME_RESULT,
      input: z.strictObject(zodShapeFor('read_output', service)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async (args, { call }) => leanCommandResult(await service.readOutput(args, serviceCall(call))),
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
        'Type text and Enter into a command awaiting input (a prompt, password, REPL), then wait like execute. secret:true for passwords: masked in all output and logs. For keys (ctrl+c, esc, arrows, q) use send_control. ' +
        SAME_RESULT,
      input: z.strictObject(zodShapeFor('respond', service)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.respond(args, serviceCall(call))),
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
        "Press keys in a running command's terminal, then wait like execute: ctrl+c to interrupt, ctrl+d for EOF, " +
        'q or space in a pager, esc/arrows/tab/f1-f12 in full-screen programs. To type words, use respond. ' +
        SAME_RESULT,
      input: z.strictObject(zodShapeFor('send_control', service)),
      output: CommandResultShape,
      outputDescribedBy: 'execute',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) => leanCommandResult(await service.sendControl(args, serviceCall(call))),
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
        'List the commands this server started and their state: to find the id of background work or see what still runs. Ended commands stay listed for ' +
        `${retentionTime(limits)} (newest ${limits.retainFinished}); one that left processes running lists them as escaped_pids. Read-only.`,
      input: z.strictObject(zodShapeFor('list_processes', service)),
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
        'send_control ctrl+c first.',
      input: z.strictObject(zodShapeFor('kill_process', service)),
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
        'commands without session_id use the "default" session. Use it for separate state (directory, venv, env) ' +
        `or another shell. Limit: ${limits.maxSessions} sessions ` +
        '(close_session frees one).',
      input: z.strictObject(zodShapeFor('create_local', service)),
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
        'List the shell sessions and their state: idle; ' +
        'busy (a command or a person holds it: a new execute there runs isolated); closed (its shell exited: the next ' +
        'command gets SESSION_CLOSED, except in "default", which the next command recreates with a new shell); ' +
        'lost (connection gone). Read-only.',
      input: z.strictObject(zodShapeFor('list_sessions', service)),
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
        'Close a session: kill everything it started (every command, whole trees) ' +
        'and its shell, and forget its command ids. Closing "default" resets it: the next command without ' +
        'session_id gets a fresh one.',
      input: z.strictObject(zodShapeFor('close_session', service)),
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
        'unsure, or to understand POLICY_DENIED. Returns allow | deny, the reason, and each simple ' +
        "command's verdict and rule. With no policy everything is allowed. Read-only.",
      input: z.strictObject(zodShapeFor('check_command', service)),
      output: PolicyDecisionShape,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (args, { call }) => service.checkCommand(args, serviceCall(call)),
      render: (result: PolicyDecision) => renderDecision(result),
    },
    logger,
  );
}
