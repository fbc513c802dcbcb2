/**
 * The `ollama-code` profile: Ollama Code's (Gemini CLI / Qwen Code family) `run_shell_command` with its
 * parameters (`command`, `description?`, `directory?`, `is_background`) and its text result block
 * (`Command:`, `Directory:`, `Stdout:`, `Stderr:`, `Error:`, `Exit Code:`, `Signal:`, `Background PIDs:`),
 * over the engine. Its `tools.core` / `tools.exclude` settings are read by `--policy-file` (they apply
 * under every profile).
 *
 * What conch fixes: a background command is a conch command, tracked by id, with its own process group,
 * so the PID reported under `Background PIDs` is its group leader: `kill -- -PID` stops it and everything
 * it started; it does not write into later commands' results. The command runs in a persistent shell
 * (exported variables persist), always starting from `directory` (relative to the project root) or the
 * project root, as the original does.
 */

import { constants } from 'node:os';
import type { ConchService } from '@conch/service';
import * as z from 'zod';
import { serviceCall } from '../call-context.js';
import { zodParameter } from '../parameter-schemas.js';
import { type CompatProfile, defineTool, inProjectRoot, processOf } from './profile.js';

/** How long a foreground command may run before it is stopped (the original's default, 5 minutes). */
const FOREGROUND_TIMEOUT_S = 300;

interface ShellBlock {
  command: string;
  directory: string;
  stdout: string;
  stderr: string;
  /** The `Error:` line (`error` is reserved for conch's error shape). */
  error_message: string | null;
  exit_code: number | null;
  signal: number | null;
  background_pids: number[];
  command_id: string;
}

function signalNumber(name: string | null | undefined): number | null {
  if (!name) return null;
  return (constants.signals as Record<string, number>)[name] ?? null;
}

/** The original's text block. */
function renderBlock(r: ShellBlock): string {
  return [
    `Command: ${r.command}`,
    `Directory: ${r.directory === '' ? '(root)' : r.directory}`,
    `Stdout: ${r.stdout === '' ? '(empty)' : r.stdout}`,
    `Stderr: ${r.stderr === '' ? '(empty)' : r.stderr}`,
    `Error: ${r.error_message ?? '(none)'}`,
    `Exit Code: ${r.exit_code ?? '(none)'}`,
    `Signal: ${r.signal ?? '(none)'}`,
    `Background PIDs: ${r.background_pids.length === 0 ? '(none)' : r.background_pids.join(', ')}`,
  ].join('\n');
}

function tools(service: ConchService) {
  const timeoutS = Math.min(FOREGROUND_TIMEOUT_S, service.limits.maxTimeoutS);
  return [
    defineTool({
      name: 'run_shell_command',
      title: 'Run a shell command',
      description:
        'This tool executes a given shell command in a persistent bash session with a real terminal. With is_background=true the ' +
        'command runs as a tracked background process in its own process group; its PID is listed under Background PIDs and ' +
        '`kill -- -PID` stops it and everything it started. Prefer is_background to a trailing `&`.\n\n' +
        'The following information is returned:\n\n' +
        'Command: Executed command.\n' +
        'Directory: Directory (relative to project root) where command was executed, or `(root)`.\n' +
        'Stdout: Output of the command (stdout and stderr together, as a terminal shows them). Can be `(empty)`.\n' +
        'Stderr: `(empty)`: a terminal merges stderr into Stdout.\n' +
        'Error: Error or `(none)` if no error occurred.\n' +
        'Exit Code: Exit code or `(none)` if terminated by signal.\n' +
        'Signal: Signal number or `(none)` if no signal was received.\n' +
        'Background PIDs: List of background processes started or `(none)`.\n\n' +
        `conch adds: the exit code is never invented; a command that waits for input, or runs past ${timeoutS} s, is stopped and ` +
        'the Error line says why; exported variables persist between calls; a command policy (tools.core / tools.exclude) may ' +
        'refuse a command (nothing ran).',
      input: z.strictObject({
        command: zodParameter('execute', 'command', service, {
          description: 'Exact bash command to execute.',
        }),
        description: z
          .string()
          .max(1000)
          .optional()
          .describe('Brief description of the command for the user (not run, not logged).'),
        directory: zodParameter('execute', 'cwd', service, {
          description:
            'Directory to run the command in, relative to the project root. Default: the project root.',
        }),
        is_background: zodParameter('execute', 'background', service, {
          description: 'Run it in the background (servers, watchers): returns at once with its PID.',
        }),
      }),
      output: {
        command: z.string(),
        directory: z.string(),
        stdout: z.string(),
        stderr: z.string(),
        error_message: z.string().nullable(),
        exit_code: z.number().int().nullable(),
        signal: z.number().int().nullable(),
        background_pids: z.array(z.number().int()),
        command_id: z.string(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      async run(args, { call }): Promise<ShellBlock> {
        const cwd = inProjectRoot(service, args.directory);
        const base = { command: args.command, directory: args.directory ?? '', stderr: '' };
        if (args.is_background) {
          const started = await service.execute(
            { command: args.command, cwd, background: true },
            serviceCall(call),
          );
          const pid = processOf(service, started.command_id).pid;
          const done = started.status === 'completed';
          return {
            ...base,
            stdout: started.output,
            error_message: null,
            exit_code: done ? (started.exit_code ?? null) : null,
            signal: done ? signalNumber(started.signal) : null,
            background_pids: !done && pid !== null ? [pid] : [],
            command_id: started.command_id,
          };
        }
        const result = await service.execute(
          { command: args.command, cwd, pause_timeout: timeoutS, total_timeout: timeoutS },
          serviceCall(call),
        );
        if (result.status === 'completed') {
          return {
            ...base,
            stdout: result.output,
            error_message: null,
            exit_code: result.exit_code ?? null,
            signal: signalNumber(result.signal),
            background_pids: [],
            command_id: result.command_id,
          };
        }
        const why =
          result.state === 'awaiting_input'
            ? `The command waited for input${result.prompt ? ` (${JSON.stringify(result.prompt.text)})` : ''} and was stopped: run it non-interactively (e.g. with -y, or < /dev/null).`
            : `The command was still running after ${timeoutS} s and was stopped; use is_background for long-running commands.`;
        const killed = await service.killProcess({ command_id: result.command_id });
        return {
          ...base,
          stdout: result.output,
          error_message: why,
          exit_code: killed.exit_code,
          signal: signalNumber(killed.signal),
          background_pids: [],
          command_id: result.command_id,
        };
      },
      render: renderBlock,
    }),
  ];
}

/** The `ollama-code` profile (see the module doc). */
export const ollamaCodeProfile: CompatProfile = {
  name: 'ollama-code',
  summary: "Ollama Code's run_shell_command",
  instructions:
    'conch (Ollama Code profile): run_shell_command runs a bash command in a persistent terminal session and returns the ' +
    'Command/Directory/Stdout/Stderr/Error/Exit Code/Signal/Background PIDs block. Use is_background for servers and watchers.',
  extraToolNames: [],
  toolNames: ['run_shell_command'],
  tools,
};
