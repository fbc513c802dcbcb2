/**
 * The `astonish` profile: Astonish's shell and process tools (`shell_command`, `process_read`,
 * `process_write`, `process_list`, `process_kill`) with their parameter names, defaults and JSON result
 * fields, over the engine. Astonish's `session_id` names one process (a conch command id).
 *
 * What conch fixes: `process_read` byte offsets are absolute over the command's whole output, so
 * `offset = total_bytes of the previous read` keeps returning exactly the new output however much is
 * printed (Astonish's offsets were positions in a 64 KiB buffer and broke once it wrapped); a process
 * is killed with its whole process group; `waiting_for_input` is kernel evidence.
 */

import type { ConchService } from '@conch/service';
import * as z from 'zod';
import { serviceCall } from '../call-context.js';
import { zodParameter } from '../parameter-schemas.js';
import { type CompatProfile, defineTool, goDuration, jsonText, processOf } from './profile.js';

/** Terminal control sequences (CSI, OSC, charset and single-character escapes). */
const ESCAPE_SEQUENCE =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[()][0-9A-Za-z]|\u001b[@-Z\\-_]/g;

/**
 * Raw terminal bytes as Astonish's pipe output looked: control sequences removed, CR LF as LF. Byte for
 * byte per range (no rendering state), so reads of consecutive ranges join into the read of the whole.
 */
function plain(raw: string): string {
  return raw.replace(ESCAPE_SEQUENCE, '').replaceAll('\r\n', '\n');
}

/** Astonish's own default wait of shell_command (seconds). */
const DEFAULT_TIMEOUT_S = 120;

function tools(service: ConchService) {
  // Astonish's session_id names a command: conch's command_id, under the original's name.
  const sessionIdParam = zodParameter('read_output', 'command_id', service, {
    description: 'The session_id returned by shell_command (for a background or still-running command).',
  });
  return [
    defineTool({
      name: 'shell_command',
      title: 'Run a shell command',
      description:
        'Run a shell command in a persistent terminal session and return its output (stdout and stderr together, as a terminal ' +
        'shows them) and exit_code. It returns early with waiting_for_input=true and a session_id when the command waits for input ' +
        '(answer with process_write), or with timed_out=true and a session_id when it is still running after `timeout` seconds (it ' +
        'keeps running: read it with process_read, stop it with process_kill). background=true starts it and returns at once with a ' +
        'session_id (servers, watchers). conch adds: waiting_for_input is kernel evidence; cd and export persist between calls; a ' +
        'command policy may refuse it (POLICY_DENIED, nothing ran).',
      input: z.strictObject({
        command: zodParameter('execute', 'command', service, { description: 'The shell command to run.' }),
        timeout: zodParameter('execute', 'total_timeout', service, {
          default: DEFAULT_TIMEOUT_S,
          description: 'Seconds to wait for the command before returning timed_out=true.',
        }),
        working_dir: zodParameter('execute', 'cwd', service, {
          description:
            "Directory to run it in (the session's working directory changes to it, like cd). Default: the current one.",
        }),
        background: zodParameter('execute', 'background', service, {
          description: 'Start it in the background and return at once with its session_id.',
        }),
      }),
      output: {
        stdout: z.string(),
        exit_code: z.number().int().nullable().optional(),
        timed_out: z.boolean().optional(),
        waiting_for_input: z.boolean().optional(),
        session_id: z.string().optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }) {
        const timeout = args.timeout ?? DEFAULT_TIMEOUT_S;
        const result = await service.execute(
          {
            command: args.command,
            ...(args.working_dir ? { cwd: args.working_dir } : {}),
            ...(args.background ? { background: true } : { pause_timeout: timeout, total_timeout: timeout }),
          },
          serviceCall(call),
        );
        if (args.background) {
          // Always the handle, even when it ended within the start-up probe: its output stays readable.
          return {
            stdout: result.output,
            session_id: result.command_id,
            ...(result.status === 'completed' ? { exit_code: result.exit_code ?? null } : {}),
          };
        }
        if (result.status === 'completed') {
          return { stdout: result.output, exit_code: result.exit_code ?? null };
        }
        if (result.state === 'awaiting_input') {
          return { stdout: result.output, waiting_for_input: true, session_id: result.command_id };
        }
        return { stdout: result.output, timed_out: true, session_id: result.command_id };
      },
      render: jsonText,
    }),
    defineTool({
      name: 'process_read',
      title: 'Read process output',
      description:
        'Read the output of a command started by shell_command, from byte `offset` (0 = the beginning). Pass the total_bytes of the ' +
        'previous read to get only the new output. Returns at once: output, total_bytes, running, and exit_code once it ended. ' +
        'conch adds: offsets are absolute over everything the command printed, so they keep working however long it runs; ' +
        'the output of an ended command stays readable.',
      input: z.strictObject({
        session_id: sessionIdParam,
        offset: z
          .number()
          .int()
          .min(0)
          .optional()
          .meta({ default: 0 })
          .describe(
            'Byte offset to start reading from (0 = beginning). Use the total_bytes from a previous read to get only new output.',
          ),
      }),
      output: {
        output: z.string(),
        total_bytes: z.number().int(),
        running: z.boolean(),
        exit_code: z.number().int().nullable().optional(),
        dropped_bytes: z.number().int().optional(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run(args) {
        const read = service.readBytes(args.session_id, args.offset ?? 0);
        const running = read.state === 'running' || read.state === 'awaiting_input';
        const note =
          read.dropped_bytes > 0
            ? `[${read.dropped_bytes} bytes before byte ${read.from_byte} are no longer kept]\n`
            : '';
        return {
          output: note + plain(read.text),
          total_bytes: read.next_byte,
          running,
          ...(running ? {} : { exit_code: read.exit_code }),
          ...(read.dropped_bytes > 0 ? { dropped_bytes: read.dropped_bytes } : {}),
        };
      },
      render: jsonText,
    }),
    defineTool({
      name: 'process_write',
      title: 'Send input to a process',
      description:
        'Send input to a running command (a prompt, a confirmation, a REPL); Enter is pressed after it (a trailing newline, or a ' +
        'literal "\\n", counts as that Enter). Waits for the answer and returns only the output printed after the write, with ' +
        'total_bytes, running and exit_code once it ended. conch adds: waits until the process asks again or goes quiet instead of a ' +
        'fixed 500 ms.',
      input: z.strictObject({
        session_id: sessionIdParam,
        input: zodParameter('respond', 'text', service, {
          description: 'Text to send to the process; a trailing newline presses Enter (added when missing).',
        }),
      }),
      output: {
        bytes_written: z.number().int(),
        output: z.string(),
        total_bytes: z.number().int(),
        running: z.boolean(),
        exit_code: z.number().int().nullable().optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }) {
        const input = args.input.replaceAll('\\n', '\n');
        const text = input.endsWith('\n') ? input.slice(0, -1) : input;
        const before = service.readBytes(args.session_id, 0).bytes_total;
        await service.respond({ command_id: args.session_id, text, enter: true }, serviceCall(call));
        const read = service.readBytes(args.session_id, before);
        const running = read.state === 'running' || read.state === 'awaiting_input';
        return {
          bytes_written: Buffer.byteLength(`${text}\n`),
          output: plain(read.text),
          total_bytes: read.next_byte,
          running,
          ...(running ? {} : { exit_code: read.exit_code }),
        };
      },
      render: jsonText,
    }),
    defineTool({
      name: 'process_list',
      title: 'List processes',
      description:
        'List the commands started by shell_command, running and recently finished: session_id, command, pid, running, duration, ' +
        'exit_code. filter keeps those whose command or session_id contains it.',
      input: z.strictObject({
        // Not list_processes' filter: the original takes "" (= no filter), which conch's refuses.
        filter: z
          .string()
          .max(1000)
          .optional()
          .describe('Optional filter to match sessions by command or ID.'),
      }),
      output: {
        sessions: z.array(
          z.object({
            session_id: z.string(),
            command: z.string(),
            pid: z.number().int().nullable(),
            running: z.boolean(),
            duration: z.string(),
            exit_code: z.number().int().nullable().optional(),
          }),
        ),
        count: z.number().int(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run(args) {
        const sessions = service
          .listCommands(args.filter ? { filter: args.filter } : {})
          .processes.map((p) => {
            const running = p.state === 'running' || p.state === 'awaiting_input';
            return {
              session_id: p.command_id,
              command: p.command,
              pid: p.pid,
              running,
              duration: goDuration(p.duration_ms),
              ...(running ? {} : { exit_code: p.exit_code }),
            };
          });
        return { sessions, count: sessions.length };
      },
      render: jsonText,
    }),
    defineTool({
      name: 'process_kill',
      title: 'Kill a process',
      description:
        'Kill a running command with everything it started (its whole process group): SIGTERM, then SIGKILL after 5 s. status is ' +
        '"killed", "already_exited", or "stop_unconfirmed" (something survived).',
      input: z.strictObject({ session_id: sessionIdParam }),
      output: {
        status: z.enum(['killed', 'already_exited', 'stop_unconfirmed']),
        exit_code: z.number().int().nullable().optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run(args) {
        processOf(service, args.session_id);
        const killed = await service.killProcess({ command_id: args.session_id });
        return {
          status: killed.result,
          ...(killed.exit_code === null ? {} : { exit_code: killed.exit_code }),
        };
      },
      render: jsonText,
    }),
  ];
}

/** The `astonish` profile (see the module doc). */
export const astonishProfile: CompatProfile = {
  name: 'astonish',
  summary: "Astonish's shell_command and process_* tools",
  instructions:
    'conch (Astonish profile): shell_command runs a command in a persistent terminal session; when it waits for input or runs ' +
    'past its timeout you get a session_id: read with process_read (byte offsets: pass the previous total_bytes), answer with ' +
    'process_write, list with process_list, stop with process_kill.',
  // Astonish's delegate_task(task, dir, session_id?, model?, agent?) is conch's own (registered when OpenCode
  // can be found), so the profile keeps it from the extra tools.
  extraToolNames: ['delegate_task'],
  toolNames: [
    'shell_command',
    'process_read',
    'process_write',
    'process_list',
    'process_kill',
    'delegate_task',
  ],
  tools,
};
