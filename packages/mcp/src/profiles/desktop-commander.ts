/**
 * The `desktop-commander` profile: Desktop Commander MCP's process tools (`start_process`,
 * `read_process_output`, `interact_with_process`, `force_terminate`, `list_sessions`) with their
 * parameter names, defaults and text results, over the engine. A process is named by its OS pid, as in
 * the original. What conch fixes: the exit code is always reported once the process has ended; output
 * printed as a process exits is never lost (the engine drains the terminal before it reports the end);
 * "waiting for input" comes from kernel evidence (the process blocked reading its terminal), not from a
 * `>` or `:` at the end of the output; the line cursor of `read_process_output` is absolute and the log
 * stays readable after the process ended.
 *
 * As in the original, the "new output" cursor of `read_process_output` (offset 0) is moved by that tool
 * only: the initial output `start_process` shows and the answers `interact_with_process` shows are given
 * again by the next offset-0 read. And `list_sessions` says `Blocked: true` for a process that was still
 * running when `start_process` returned. Both are kept per engine (every MCP connection to one daemon sees
 * the same), in {@link DcState}.
 */

import type { AbortSignalLike, CommandResult, PageInfo } from '@conch/core';
import type { ConchService } from '@conch/service';
import * as z from 'zod';
import { serviceCall } from '../call-context.js';
import { zodParameter } from '../parameter-schemas.js';
import {
  type CompatProfile,
  commandByPid,
  defineTool,
  processOf,
  secondsFromMs,
  sessionForShell,
} from './profile.js';

type DcStatus = 'waiting_for_input' | 'finished' | 'running' | 'timeout';

const DcResultShape = {
  pid: z.number().int(),
  status: z.enum(['waiting_for_input', 'finished', 'running', 'timeout']),
  command_id: z.string(),
  exit_code: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
};

interface DcResult {
  pid: number;
  status: DcStatus;
  command_id: string;
  exit_code?: number | null;
  signal?: string | null;
  /** Rendered text (the original's result is text). */
  text: string;
}

const TEXT_SHAPE = { text: z.string() };

function statusOf(result: CommandResult): DcStatus {
  if (result.status === 'completed') return 'finished';
  if (result.state === 'awaiting_input') return 'waiting_for_input';
  return 'running';
}

/** The original's one-line state messages, with the exit code always said once the process ended. */
function stateLine(pid: number, result: CommandResult): string {
  if (result.status === 'completed') {
    const ending =
      result.exit_code === null || result.exit_code === undefined
        ? result.signal
          ? `signal ${result.signal}`
          : 'an unknown exit code'
        : `exit code ${result.exit_code}`;
    return `✅ Process completed with ${ending} (runtime: ${(result.duration_ms / 1000).toFixed(2)}s)`;
  }
  if (result.state === 'awaiting_input') {
    const prompt = result.prompt
      ? ` (${result.prompt.kind} prompt: ${JSON.stringify(result.prompt.text)})`
      : '';
    return `🔄 Process ${pid} is waiting for input${prompt}. Use interact_with_process to answer it.`;
  }
  return '⏳ Process is running. Use read_process_output to get more output.';
}

function ended(result: CommandResult): Pick<DcResult, 'exit_code' | 'signal'> {
  return result.status === 'completed'
    ? { exit_code: result.exit_code ?? null, signal: result.signal ?? null }
    : {};
}

/**
 * Where the next offset-0 `read_process_output` starts: `line` is the first line not yet shown whole, and
 * `seen` the part of it already shown (it was the last, unfinished line then: a prompt, a progress line).
 * Line numbers are the log's absolute ones, so the cursor never shifts.
 */
interface ReadCursor {
  line: number;
  seen: string;
}

/** What the profile remembers per engine: the read cursors and the processes `start_process` left running. */
interface DcState {
  cursors: Map<string, ReadCursor>;
  /** Commands still running when their `start_process` returned (`Blocked: true`). */
  blocked: Set<string>;
}

const states = new WeakMap<ConchService, DcState>();

function stateOf(service: ConchService): DcState {
  let state = states.get(service);
  if (!state) {
    state = { cursors: new Map(), blocked: new Set() };
    states.set(service, state);
  }
  return state;
}

/** Forgets the commands the engine no longer knows (pruned), so the state stays as bounded as the engine's. */
function forgetPruned(service: ConchService, state: DcState): void {
  const known = new Set(service.listCommands().processes.map((p) => p.command_id));
  for (const id of state.cursors.keys()) if (!known.has(id)) state.cursors.delete(id);
  for (const id of state.blocked) if (!known.has(id)) state.blocked.delete(id);
}

/** A page of the log from line `from`: its lines and the engine's page info (the header removed). */
async function pageFrom(
  service: ConchService,
  commandId: string,
  from: number,
  length: number,
): Promise<{ lines: string[]; page: PageInfo; result: CommandResult; cut: boolean }> {
  const result = await service.readOutput({ command_id: commandId, offset: from, length });
  const page = result.page as PageInfo;
  const newline = result.output.indexOf('\n');
  const header = newline < 0 ? result.output : result.output.slice(0, newline);
  const count = Math.max(0, page.to_line - page.from_line + 1);
  const lines = count === 0 ? [] : result.output.slice(newline + 1).split('\n');
  return { lines, page, result, cut: header.includes(' cut at ') };
}

/** True when the log has something after `cursor`: a further line, or more of the line it stopped in. */
async function hasNewOutput(service: ConchService, commandId: string, cursor: ReadCursor): Promise<boolean> {
  const { lines, page } = await pageFrom(service, commandId, cursor.line, 1);
  if (page.total_lines > cursor.line + 1) return true;
  const [line] = lines;
  return line !== undefined && line !== cursor.seen;
}

/**
 * Waits until the command has output after `cursor`, has ended, the time is up, or the call is cancelled
 * (the original polled its line count every 50 ms; this follows the engine's output events).
 */
async function waitForNewOutput(
  service: ConchService,
  commandId: string,
  cursor: ReadCursor,
  timeoutMs: number,
  signal: AbortSignalLike | undefined,
): Promise<void> {
  if (timeoutMs <= 0 || signal?.aborted || (await hasNewOutput(service, commandId, cursor))) return;
  const from = service.readBytes(commandId, 0).bytes_total;
  await new Promise<void>((resolve) => {
    let done = false;
    let checking = false;
    let again = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      follow?.dispose();
      resolve();
    };
    const check = async (ended: boolean) => {
      if (ended) return finish();
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          if (await hasNewOutput(service, commandId, cursor)) return finish();
        } while (again && !done);
      } catch {
        finish();
      } finally {
        checking = false;
      }
    };
    const timer = setTimeout(finish, timeoutMs);
    signal?.addEventListener('abort', finish);
    const follow: { dispose(): void } | undefined = service.followOutput(commandId, from, (read) => {
      void check(read.state !== 'running' && read.state !== 'awaiting_input');
    });
    if (done) follow.dispose();
  });
}

/** The warning for lines gone from memory and the log file (the original's word for it: evicted). */
function evictedNote(page: PageInfo): string {
  return page.dropped_lines > 0
    ? `\n[WARNING: output exceeded the buffer cap; ${page.dropped_lines} lines were evicted and cannot be read. Line numbers and totals still count them]`
    : '';
}

/** Desktop Commander's own defaults (its parameters in milliseconds and its offset 0 = "new output"). */
const DC_DEFAULTS = { readTimeoutMs: 5000, interactTimeoutMs: 8000, offset: 0 } as const;

const pidParam = z.number().int().describe('The PID returned by start_process.');
const verboseTiming = z
  .boolean()
  .optional()
  .describe('Accepted for compatibility; conch reports duration in the result instead of a timing log.');

function tools(service: ConchService) {
  const runtimeS = (ms: number) => secondsFromMs(service, ms);
  const state = stateOf(service);
  return [
    defineTool({
      name: 'start_process',
      title: 'Start a process',
      description:
        'Start a terminal process and wait up to timeout_ms for it to finish or to wait for input. Returns its PID (the handle for the ' +
        'other tools) and its first output. The process runs in its own process group with a real terminal (PTY), started from the ' +
        "working directory of the server's terminal session. conch adds: the exit code is reported when the process has ended; output " +
        'printed while it exits is never lost; "waiting for input" means the kernel saw it reading its terminal (not a guess from a ' +
        'trailing ">"); a command policy may refuse it (POLICY_DENIED, nothing ran). Continue with read_process_output (more output), ' +
        'interact_with_process (answer a prompt), force_terminate (stop it and its children).',
      input: z.strictObject({
        command: zodParameter('execute', 'command', service, { description: 'The command line to run.' }),
        timeout_ms: z
          .number()
          .min(0)
          .describe(
            'How long to wait (milliseconds) for the process to finish or ask for input before returning with it still running.',
          ),
        shell: zodParameter('create_local', 'shell', service, {
          description: "Shell to run it with (e.g. bash, zsh). Default: the user's login shell.",
        }),
        verbose_timing: verboseTiming,
      }),
      output: { ...DcResultShape, shell: z.string(), ...TEXT_SHAPE },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }) {
        const sessionId = await sessionForShell(service, args.shell);
        const started = await service.execute(
          { command: args.command, background: true, ...(sessionId ? { session_id: sessionId } : {}) },
          serviceCall(call),
        );
        let result = started;
        let output = started.output;
        if (started.status === 'partial' && started.state !== 'awaiting_input') {
          const waitS = runtimeS(args.timeout_ms);
          result = await service.readOutput(
            { command_id: started.command_id, pause_timeout: waitS, total_timeout: waitS },
            serviceCall(call),
          );
          output += result.output;
        }
        forgetPruned(service, state);
        if (result.status !== 'completed') state.blocked.add(started.command_id);
        const info = processOf(service, started.command_id);
        const pid = info.pid ?? -1;
        const { sessions } = await service.listSessions();
        const shell = sessions.find((s) => s.session_id === started.session_id)?.shell ?? 'sh';
        return {
          pid,
          shell,
          status: statusOf(result),
          command_id: started.command_id,
          ...ended(result),
          text: `Process started with PID ${pid} (shell: ${shell})\nInitial output:\n${output}\n${stateLine(pid, result)}`,
        };
      },
      render: (r: DcResult) => r.text,
    }),
    defineTool({
      name: 'read_process_output',
      title: 'Read process output',
      description:
        'Read output of a process started by start_process, like reading a file: offset 0 = the new output since the last ' +
        'read_process_output (what start_process and interact_with_process showed included; waits up to timeout_ms for some), ' +
        'offset > 0 = from that absolute line (0-based), offset < 0 = the last |offset| lines; ' +
        'length = lines to return. The first line is a header: [Reading N lines from line X (total: T lines, R remaining)]. ' +
        'conch adds: line numbers are absolute and never shift, the log stays readable after the process ended, and the exit code is ' +
        'reported once it has.',
      input: z.strictObject({
        pid: pidParam,
        timeout_ms: z
          .number()
          .min(0)
          .optional()
          .meta({ default: DC_DEFAULTS.readTimeoutMs })
          .describe('For offset 0: how long to wait (milliseconds) for new output.'),
        offset: zodParameter('read_output', 'offset', service, {
          default: DC_DEFAULTS.offset,
          description:
            '0 = new output since the last read_process_output; > 0 = start at this absolute line; < 0 = the last |offset| lines.',
        }),
        length: zodParameter('read_output', 'length', service, {
          description: 'Most lines to return.',
        }),
        verbose_timing: verboseTiming,
      }),
      output: { ...DcResultShape, ...TEXT_SHAPE },
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      async run(args, { call }) {
        const info = commandByPid(service, args.pid);
        const offset = args.offset ?? DC_DEFAULTS.offset;
        let header: string;
        let result: CommandResult;
        if (offset === 0) {
          const cursor = state.cursors.get(info.command_id) ?? { line: 0, seen: '' };
          const waitMs = runtimeS(args.timeout_ms ?? DC_DEFAULTS.readTimeoutMs) * 1000;
          await waitForNewOutput(service, info.command_id, cursor, waitMs, call.signal);
          const read = await pageFrom(service, info.command_id, cursor.line, args.length ?? 1000);
          const { lines, page } = read;
          result = read.result;
          const shown = [...lines];
          let first = page.from_line;
          // The line the last read stopped in: only what was added to it since, if it merely grew.
          if (page.from_line === cursor.line && cursor.seen !== '' && shown[0]?.startsWith(cursor.seen)) {
            shown[0] = shown[0].slice(cursor.seen.length);
            if (shown[0] === '') {
              shown.shift();
              first++;
            }
          }
          const last = lines[lines.length - 1];
          // Stop in the last line (it may still grow) unless the page ended early or cut it.
          const next =
            last === undefined
              ? cursor
              : page.remaining_lines === 0 && !read.cut
                ? { line: page.to_line, seen: last }
                : { line: page.to_line + 1, seen: '' };
          state.cursors.set(info.command_id, next);
          result = { ...result, output: shown.join('\n') };
          header =
            page.remaining_lines > 0
              ? `[Reading ${shown.length} new lines from line ${first} (total: ${page.total_lines} lines, ${page.remaining_lines} remaining)]`
              : `[Reading ${shown.length} new lines (total: ${page.total_lines} lines)]`;
          header += evictedNote(page);
        } else {
          const read = await pageFrom(service, info.command_id, offset, args.length ?? 1000);
          const { lines, page } = read;
          result = { ...read.result, output: lines.join('\n') };
          header =
            offset < 0
              ? `[Reading last ${lines.length} lines (total: ${page.total_lines} lines)]`
              : `[Reading ${lines.length} lines from line ${page.from_line} (total: ${page.total_lines} lines, ${page.remaining_lines} remaining)]`;
          header += evictedNote(page);
        }
        const body = result.output === '' ? '(No output in requested range)' : result.output;
        const ending =
          result.status === 'completed' || result.state === 'awaiting_input'
            ? `\n\n${stateLine(args.pid, result)}`
            : '';
        return {
          pid: args.pid,
          status: statusOf(result),
          command_id: info.command_id,
          ...ended(result),
          text: `${header}\n\n${body}${ending}`,
        };
      },
      render: (r: DcResult) => r.text,
    }),
    defineTool({
      name: 'interact_with_process',
      title: 'Send input to a process',
      description:
        'Type input into a running process (a prompt, a REPL) and press Enter, then wait up to timeout_ms for its answer: returns once ' +
        'the process waits for input again, has ended, or the time is up. wait_for_prompt false returns at once (read the answer with ' +
        'read_process_output). conch adds: the answer a process prints as it exits is part of the result, with the exit code; ' +
        '"waiting for input" is kernel evidence, not a guess from the output.',
      input: z.strictObject({
        pid: pidParam,
        input: zodParameter('respond', 'text', service, {
          description: 'The text to send; Enter is pressed after it.',
        }),
        timeout_ms: z
          .number()
          .min(0)
          .optional()
          .meta({ default: DC_DEFAULTS.interactTimeoutMs })
          .describe('How long to wait (milliseconds) for the answer.'),
        wait_for_prompt: z
          .boolean()
          .optional()
          .meta({ default: true })
          .describe('Wait for the answer (true) or return as soon as the input is sent (false).'),
        verbose_timing: verboseTiming,
      }),
      output: { ...DcResultShape, ...TEXT_SHAPE },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }) {
        const info = commandByPid(service, args.pid);
        const wait = args.wait_for_prompt !== false;
        const waitS = wait ? runtimeS(args.timeout_ms ?? DC_DEFAULTS.interactTimeoutMs) : 0;
        const text = args.input.endsWith('\n') ? args.input.slice(0, -1) : args.input;
        // The answer is what the process prints after the input (the original's snapshot before sending);
        // what came before stays for read_process_output, whose cursor this call does not move.
        await service.readOutput({ command_id: info.command_id, pause_timeout: 0, max_output_chars: 100 });
        const result = await service.respond(
          { command_id: info.command_id, text, enter: true, pause_timeout: waitS, total_timeout: waitS },
          serviceCall(call),
        );
        const base = {
          pid: args.pid,
          status: statusOf(result),
          command_id: info.command_id,
          ...ended(result),
        };
        if (!wait) {
          return {
            ...base,
            text: `✅ Input sent to process ${args.pid}. Use read_process_output to get the response.`,
          };
        }
        const ending =
          result.status === 'completed' || result.state === 'awaiting_input'
            ? stateLine(args.pid, result)
            : '⏱️ Response may be incomplete (timeout reached)';
        const output =
          result.output.trim() === '' ? '.\n📭 (No output produced)' : `:\n\n📤 Output:\n${result.output}`;
        return { ...base, text: `✅ Input executed in process ${args.pid}${output}\n\n${ending}` };
      },
      render: (r: DcResult) => r.text,
    }),
    defineTool({
      name: 'force_terminate',
      title: 'Stop a process',
      description:
        'Stop a process started by start_process, with everything it started (its whole process group): SIGTERM, then SIGKILL after ' +
        'a 5 s grace. conch adds: the result says whether it had already ended, and its exit code.',
      input: z.strictObject({ pid: pidParam }),
      output: {
        pid: z.number().int(),
        result: z.enum(['killed', 'already_exited', 'stop_unconfirmed']),
        exit_code: z.number().int().nullable(),
        signal: z.string().nullable(),
        ...TEXT_SHAPE,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run(args) {
        const info = commandByPid(service, args.pid);
        const killed = await service.killProcess({ command_id: info.command_id });
        const text =
          killed.result === 'already_exited'
            ? `No active session found for PID ${args.pid} (it had already ended with exit code ${killed.exit_code})`
            : killed.result === 'killed'
              ? `Successfully initiated termination of session ${args.pid}`
              : `Error: Could not terminate every process of session ${args.pid}; still running: ${killed.survivors.join(', ')}`;
        return {
          pid: args.pid,
          result: killed.result,
          exit_code: killed.exit_code,
          signal: killed.signal,
          text,
        };
      },
      render: (r: { text: string }) => r.text,
    }),
    defineTool({
      name: 'list_sessions',
      title: 'List running processes',
      description:
        'List the processes started by start_process that are still running: PID, Blocked (true: it was still running when ' +
        'start_process returned, so it is left to run in the background), and runtime in seconds.',
      input: z.strictObject({}),
      output: {
        sessions: z.array(
          z.object({
            pid: z.number().int(),
            isBlocked: z.boolean(),
            runtimeMs: z.number(),
            command_id: z.string(),
          }),
        ),
        ...TEXT_SHAPE,
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run() {
        const sessions = service
          .listCommands({ include_finished: false })
          .processes.filter((p) => p.pid !== null)
          .map((p) => ({
            pid: p.pid as number,
            isBlocked: state.blocked.has(p.command_id),
            runtimeMs: p.duration_ms,
            command_id: p.command_id,
          }));
        const text =
          sessions.length === 0
            ? 'No active sessions'
            : sessions
                .map(
                  (s) =>
                    `PID: ${s.pid}, Blocked: ${s.isBlocked}, Runtime: ${Math.round(s.runtimeMs / 1000)}s`,
                )
                .join('\n');
        return { sessions, text };
      },
      render: (r: { text: string }) => r.text,
    }),
  ];
}

/** The `desktop-commander` profile (see the module doc). */
export const desktopCommanderProfile: CompatProfile = {
  name: 'desktop-commander',
  summary: "Desktop Commander MCP's process tools (start_process, read_process_output, …)",
  instructions:
    'conch (Desktop Commander profile): start_process runs a command in a real terminal and returns its PID and first output; ' +
    'read_process_output pages its output (offset 0 = new, > 0 = absolute line, < 0 = tail); interact_with_process answers ' +
    'prompts; force_terminate stops a process and its children; list_sessions shows the running ones. Exit codes are always ' +
    'reported once a process has ended.',
  extraToolNames: [],
  toolNames: [
    'start_process',
    'read_process_output',
    'interact_with_process',
    'force_terminate',
    'list_sessions',
  ],
  tools,
};
