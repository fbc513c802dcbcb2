import { SHELL_PROGRAMS } from '@conch/core';
import { BUILTIN_HANDLERS } from './builtin-handlers.js';
import { DISGUISED_INTERPRETER_HANDLERS } from './disguised-interpreters.js';
import type { ProgramHandler } from './handler-api.js';
import { COMMAND_RUNNERS, SCHEDULERS } from './programs.js';
import { runShell, SHELL_TEXT_HANDLERS } from './shell-handlers.js';
import { runCommandRunner, runScheduler, WRAPPER_HANDLERS } from './wrapper-handlers.js';

/**
 * The program handlers, by normalised program name: how the policy checks what each program it knows
 * runs or changes, beside the program lists of `programs.ts`. A program without a handler only needs its
 * rules. A name's own handler comes first, then the shells of the one list, the `COMMAND_RUNNERS` and the
 * `SCHEDULERS`.
 */
export const PROGRAM_HANDLERS: ReadonlyMap<string, ProgramHandler> = new Map<string, ProgramHandler>([
  ...[...SCHEDULERS].map((name) => [name, runScheduler] as const),
  ...[...COMMAND_RUNNERS].map(([name, spec]) => {
    const handler: ProgramHandler = (invocation, walk) => runCommandRunner(invocation, walk, spec);
    return [name, handler] as const;
  }),
  ...[...SHELL_PROGRAMS].map((name) => [name, runShell] as const),
  ...WRAPPER_HANDLERS,
  ...SHELL_TEXT_HANDLERS,
  ...BUILTIN_HANDLERS,
  ...DISGUISED_INTERPRETER_HANDLERS,
]);
