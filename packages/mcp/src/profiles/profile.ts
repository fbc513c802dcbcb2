/**
 * What a compatibility profile is: a table of tools (names, parameters, defaults) mapped onto the
 * engine's operations, each with a renderer for the original tool's result shape. No profile has a
 * waiter, a buffer or a process model of its own: every call goes through the ConchService, so the
 * engine's guarantees (absolute cursors, drain before exit, kernel prompt evidence, process-group
 * kills, policy, bounded memory) hold under every profile.
 */

import { resolve } from 'node:path';
import { ConchError, ErrorCode, type ProcessInfo } from '@conch/core';
import type { ConchService } from '@conch/service';
import type * as z from 'zod';
import type { ConchToolDefinition } from '../tool-kit.js';

/** A tool definition with its types erased, so tables of different tools fit in one list. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous table of tools; each entry is typed where it is defined.
export type AnyToolDefinition = ConchToolDefinition<z.ZodObject, any>;

/** Types one table entry (checks `run`/`render` against the schema) and erases it for the table. */
export function defineTool<I extends z.ZodObject, R>(
  definition: ConchToolDefinition<I, R>,
): AnyToolDefinition {
  return definition as unknown as AnyToolDefinition;
}

/** A compatibility profile (see the module doc). */
export interface CompatProfile {
  /** The `--profile` name. */
  name: string;
  /** One line: what the profile imitates. */
  summary: string;
  /** The server `instructions` under this profile. */
  instructions: string;
  /** Tools registered by the server's extra registrars (e.g. `connect_ssh`) that this profile keeps. */
  extraToolNames: readonly string[];
  /** Every tool name the profile lists, in order (its own and the kept extras). */
  toolNames: readonly string[];
  /** The profile's own tools over the service. */
  tools(service: ConchService): readonly AnyToolDefinition[];
}

/** Seconds for the engine from an original's milliseconds, within the engine's limit. */
export function secondsFromMs(service: ConchService, ms: number): number {
  return Math.min(ms / 1000, service.limits.maxTimeoutS);
}

/** The project root of the profiles whose originals resolve directories against it: new sessions' cwd. */
export function projectRoot(service: ConchService): string {
  return service.defaults.cwd ?? process.cwd();
}

/** `dir` resolved against the project root (absolute paths stay as they are). */
export function inProjectRoot(service: ConchService, dir: string | undefined): string {
  return resolve(projectRoot(service), dir ?? '.');
}

/**
 * The session to run a command in when an original lets the caller pick a shell: undefined (the default
 * session) without one, else a local session of that shell, named `shell:<shell>`, created on first use.
 */
export async function sessionForShell(
  service: ConchService,
  shell: string | undefined,
): Promise<string | undefined> {
  if (shell === undefined) return undefined;
  const name = `shell:${shell}`;
  const existing = (await service.listSessions()).sessions.find(
    (s) => s.name === name && (s.state === 'idle' || s.state === 'busy'),
  );
  if (existing) return existing.session_id;
  return (await service.createLocal({ shell, name })).session_id;
}

/** A command as `list_processes` reports it (to find its OS pid). */
export function processOf(service: ConchService, commandId: string): ProcessInfo {
  const info = service.listCommands({ filter: commandId }).processes.find((p) => p.command_id === commandId);
  if (!info) {
    throw new ConchError(ErrorCode.COMMAND_NOT_FOUND, `Invalid command_id: ${JSON.stringify(commandId)}.`);
  }
  return info;
}

/**
 * The command an original's OS-pid handle names: the newest command whose process has that pid. Its
 * log stays readable after it ended (until pruned), unlike the originals whose handle died with it.
 */
export function commandByPid(service: ConchService, pid: number): ProcessInfo {
  const matches = service.listCommands().processes.filter((p) => p.pid === pid);
  const found = matches[matches.length - 1];
  if (!found) {
    throw new ConchError(ErrorCode.COMMAND_NOT_FOUND, `No session found for PID ${pid}.`, {
      hint: 'Use a PID returned by start_process (list_sessions shows the running ones).',
    });
  }
  return found;
}

/** A duration as Go's `time.Duration.String()` writes it after truncation to seconds (`1h2m3s`, `0s`). */
export function goDuration(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** JSON text of a result, for the originals whose result is a JSON object. */
export function jsonText(result: unknown): string {
  return JSON.stringify(result, null, 2);
}
