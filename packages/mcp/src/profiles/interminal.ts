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

const SESSION_ID = z
  .string()
  .min(1)
  .max(200)
  .describe('Session to use (from create_local, connect_ssh or list_sessions).');
const COMMAND_ID = z.string().min(1).max(200).describe('The command_id of a partial result.');

function waits(service: ConchService) {
  const maxT = service.limits.maxTimeoutS;
  return {
    pause_timeout: z
      .number()
      .min(0)
      .max(maxT)
      .optional()
      .meta({ default: 9 })
      .describe(
        `Seconds of output SILENCE after which the call returns "partial". Default 9, at most ${maxT}.`,
      ),
    total_timeout: z
      .number()
      .min(0)
      .max(maxT)
      .optional()
      .meta({ default: 20 })
      .describe(
        `Seconds after which the call returns "partial" while output keeps streaming. Default 20, at most ${maxT}.`,
      ),
  };
}

const PARTIAL_DOC =
  'Result: {status:"completed", output, exit_code} when the command ended, or {status:"partial", output, command_id} while it ' +
  'still runs (continue with read_output, answer prompts with respond, press keys with send_control).';

function tools(service: ConchService) {
  const w = waits(service);
  const timing = (a: { pause_timeout?: number | undefined; total_timeout?: number | undefined }) => ({
    pause_timeout: a.pause_timeout ?? 9,
    total_timeout: a.total_timeout ?? 20,
  });
  return [
    defineTool({
      name: 'create_local',
      title: 'Open a local terminal session',
      description:
        'Open a persistent local shell session (a terminal tab: cd, export and venvs persist). Returns the session with its session_id.',
      input: z.strictObject({
        shell: z
          .string()
          .min(1)
          .optional()
          .describe("Shell to start. Default: the user's login shell, else /bin/bash."),
        cwd: z
          .string()
          .min(1)
          .optional()
          .describe("Starting directory. Default: the server's working directory."),
        name: z.string().min(1).max(100).optional().describe('A label shown by list_sessions.'),
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
        command: z.string().min(1).max(100_000).describe('The command to run.'),
        session_id: SESSION_ID.optional(),
        shell: z
          .string()
          .min(1)
          .optional()
          .describe('Without session_id: run in a local session of this shell (created on first use).'),
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
      input: z.strictObject({ command_id: COMMAND_ID, ...w }),
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
        command_id: COMMAND_ID,
        text: z.string().max(100_000).describe('The text to type; Enter is pressed after it.'),
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
        command_id: COMMAND_ID,
        signal: z
          .string()
          .min(1)
          .max(50)
          .optional()
          .meta({ default: 'ctrl+c' })
          .describe('The key to press, e.g. "ctrl+c" (default), "ctrl+d", "esc", "q".'),
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
            { command_id: args.command_id, key: args.signal ?? 'ctrl+c', ...timing(args) },
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
      input: z.strictObject({ session_id: SESSION_ID }),
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
