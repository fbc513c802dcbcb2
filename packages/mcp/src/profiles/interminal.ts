/**
 * The `interminal` profile: interminal's tool surface (`connect_ssh`, `create_local`, `execute`,
 * `read_output`, `respond`, `send_control`, `list_sessions`, `disconnect`) with its parameter names,
 * defaults (pause_timeout 9 s, total_timeout 20 s, send_control's signal "ctrl+c") and JSON results
 * `{status, output, exit_code}` (completed) / `{status, output, command_id}` (partial), over the engine.
 *
 * What conch fixes: `connect_ssh` is conch's own, so host keys are verified before any credential is
 * sent (known_hosts; unknown keys are asked about or refused, changed keys always refused); output is
 * bounded and reads are non-destructive (read_output continues from an absolute cursor).
 */

import type { CommandResult } from '@conch/core';
import type { ConchService } from '@conch/service';
import * as z from 'zod';
import { serviceCall } from '../call-context.js';
import { zodParameter } from '../parameter-schemas.js';
import { SessionSchema } from '../schemas.js';
import { type CompatProfile, defineTool, jsonText, sessionForShell } from './profile.js';

const ResultShape = {
  status: z.enum(['completed', 'partial']),
  output: z.string(),
  exit_code: z.number().int().nullable().optional(),
  command_id: z.string().optional(),
  state: z.string().optional(),
  prompt: z.object({ kind: z.string(), text: z.string() }).optional(),
};

/** interminal's result: the exit code when completed, the command id to continue with when partial. */
function interminalResult(result: CommandResult) {
  if (result.status === 'completed') {
    return { status: result.status, output: result.output, exit_code: result.exit_code ?? null };
  }
  return {
    status: result.status,
    output: result.output,
    command_id: result.command_id,
    state: result.state,
    ...(result.prompt ? { prompt: result.prompt } : {}),
  };
}

/** interminal's own defaults of its waits (the same numbers as conch's built-in ones, fixed here). */
const WAIT_DEFAULTS = { pause_timeout: 9, total_timeout: 20 } as const;

/** The tables' parameters under interminal's words and defaults. */
function params(service: ConchService) {
  return {
    session_id: zodParameter('execute', 'session_id', service, {
      description: 'Session to use (from create_local, connect_ssh or list_sessions).',
    }),
    command_id: zodParameter('read_output', 'command_id', service, {
      description: 'The command_id of a partial result.',
    }),
    pause_timeout: zodParameter('execute', 'pause_timeout', service, {
      default: WAIT_DEFAULTS.pause_timeout,
      description: 'Seconds of output SILENCE after which the call returns "partial".',
    }),
    total_timeout: zodParameter('execute', 'total_timeout', service, {
      default: WAIT_DEFAULTS.total_timeout,
      description: 'Seconds after which the call returns "partial" while output keeps streaming.',
    }),
  };
}

/** send_control's key when the call names none (interminal's default). */
const DEFAULT_KEY = 'ctrl+c';

const PARTIAL_DOC =
  'Result: {status:"completed", output, exit_code} when the command ended, or {status:"partial", output, command_id} while it ' +
  'still runs (continue with read_output, answer prompts with respond, press keys with send_control).';

function tools(service: ConchService) {
  const p = params(service);
  const w = { pause_timeout: p.pause_timeout, total_timeout: p.total_timeout };
  const timing = (a: { pause_timeout?: number | undefined; total_timeout?: number | undefined }) => ({
    pause_timeout: a.pause_timeout ?? WAIT_DEFAULTS.pause_timeout,
    total_timeout: a.total_timeout ?? WAIT_DEFAULTS.total_timeout,
  });
  return [
    defineTool({
      name: 'create_local',
      title: 'Open a local terminal session',
      description:
        'Open a persistent local shell session (a terminal tab: cd, export and venvs persist). Returns the session with its session_id.',
      input: z.strictObject({
        shell: zodParameter('create_local', 'shell', service, {
          description: "Shell to start. Default: the user's login shell, else /bin/bash.",
        }),
        cwd: zodParameter('create_local', 'cwd', service, {
          description: "Starting directory. Default: the server's working directory.",
        }),
        name: zodParameter('create_local', 'name', service, {
          description: 'A label shown by list_sessions.',
        }),
      }),
      output: SessionSchema.shape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: (args) =>
        service.createLocal({
          ...(args.shell ? { shell: args.shell } : {}),
          ...(args.cwd ? { cwd: args.cwd } : {}),
          ...(args.name ? { name: args.name } : {}),
        }),
      render: jsonText,
    }),
    defineTool({
      name: 'execute',
      title: 'Run a command',
      description:
        'Run a command in a terminal session and wait: returns "completed" when it ends, or "partial" after pause_timeout seconds of ' +
        'silence, total_timeout seconds of streaming, or when it waits for input (state "awaiting_input", from kernel evidence). A ' +
        `partial command keeps running. ${PARTIAL_DOC} Without session_id it runs in the local "default" session (or, with shell, in ` +
        'a local session of that shell). conch adds: output is bounded and the full log kept; a policy may refuse a command.',
      input: z.strictObject({
        command: zodParameter('execute', 'command', service, { description: 'The command to run.' }),
        session_id: p.session_id,
        shell: zodParameter('create_local', 'shell', service, {
          description: 'Without session_id: run in a local session of this shell (created on first use).',
        }),
        ...w,
      }),
      output: ResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }) {
        const sessionId = args.session_id ?? (await sessionForShell(service, args.shell));
        const result = await service.execute(
          { command: args.command, ...(sessionId ? { session_id: sessionId } : {}), ...timing(args) },
          serviceCall(call),
        );
        return interminalResult(result);
      },
      render: jsonText,
    }),
    defineTool({
      name: 'read_output',
      title: 'Read more output',
      description: `Wait for and return the new output of a partial command (same waiting as execute). ${PARTIAL_DOC}`,
      input: z.strictObject({ command_id: p.command_id, ...w }),
      output: ResultShape,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async (args, { call }) =>
        interminalResult(
          await service.readOutput({ command_id: args.command_id, ...timing(args) }, serviceCall(call)),
        ),
      render: jsonText,
    }),
    defineTool({
      name: 'respond',
      title: 'Answer a prompt',
      description: `Type text and Enter into a command waiting for input, then wait like execute. ${PARTIAL_DOC}`,
      input: z.strictObject({
        command_id: p.command_id,
        text: zodParameter('respond', 'text', service, {
          description: 'The text to type; Enter is pressed after it.',
        }),
        ...w,
      }),
      output: ResultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      run: async (args, { call }) =>
        interminalResult(
          await service.respond(
            { command_id: args.command_id, text: args.text, ...timing(args) },
            serviceCall(call),
          ),
        ),
      render: jsonText,
    }),
    defineTool({
      name: 'send_control',
      title: 'Press a control key',
      description: `Press a key in a running command's terminal (default ctrl+c; also esc, q, tab, arrows, ctrl+d…), then wait like execute. ${PARTIAL_DOC}`,
      input: z.strictObject({
        command_id: p.command_id,
        signal: zodParameter('send_control', 'key', service, {
          required: false,
          default: DEFAULT_KEY,
          description: 'The key to press, e.g. "ctrl+c", "ctrl+d", "esc", "q".',
        }),
        ...w,
      }),
      output: ResultShape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      run: async (args, { call }) =>
        interminalResult(
          await service.sendControl(
            { command_id: args.command_id, key: args.signal ?? DEFAULT_KEY, ...timing(args) },
            serviceCall(call),
          ),
        ),
      render: jsonText,
    }),
    defineTool({
      name: 'list_sessions',
      title: 'List sessions',
      description:
        'List the open terminal sessions (local and SSH) with their ids, state and working directory.',
      input: z.strictObject({}),
      output: { sessions: z.array(SessionSchema) },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: () => service.listSessions(),
      render: jsonText,
    }),
    defineTool({
      name: 'disconnect',
      title: 'Close a session',
      description:
        'Close a session (local or SSH): its shell and everything still running in it are stopped.',
      input: z.strictObject({
        session_id: zodParameter('close_session', 'session_id', service, {
          description: 'The session to close (from create_local, connect_ssh or list_sessions).',
        }),
      }),
      output: {
        status: z.literal('disconnected'),
        session_id: z.string(),
        killed_command_ids: z.array(z.string()),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      async run(args) {
        const closed = await service.closeSession({ session_id: args.session_id });
        return {
          status: 'disconnected' as const,
          session_id: closed.session_id,
          killed_command_ids: closed.killed_command_ids,
        };
      },
      render: jsonText,
    }),
  ];
}

/** The `interminal` profile (see the module doc). */
export const interminalProfile: CompatProfile = {
  name: 'interminal',
  summary: "interminal's tools (execute with pause/total timeouts, read_output, respond, send_control, SSH)",
  instructions:
    'conch (interminal profile): execute runs a command in a persistent terminal session and returns "completed" (with ' +
    'exit_code) or "partial" (with command_id: continue with read_output, respond, send_control). connect_ssh opens an SSH ' +
    'session with verified host keys; create_local a local one; disconnect closes one.',
  extraToolNames: ['connect_ssh'],
  toolNames: [
    'connect_ssh',
    'create_local',
    'execute',
    'read_output',
    'respond',
    'send_control',
    'list_sessions',
    'disconnect',
  ],
  tools,
};
