/**
 * The server `instructions` sent at initialization: a short guide for the model on how conch's tools fit
 * together. Built from the engine's limits so the numbers are the configured ones.
 */

import type { ConchService } from '@conch/service';

/** The instructions text for a server over `service` (its limits and defaults). */
export function serverInstructions(service: Pick<ConchService, 'limits' | 'defaults'>): string {
  const { limits, defaults } = service;
  const chars = Math.min(defaults.maxOutputChars, limits.maxOutputChars);
  return [
    'conch gives you real, persistent terminals: local ones on this machine, and remote ones over SSH ' +
      '(connect_ssh returns a session_id that every command tool accepts, exactly like a local one).',
    '',
    'Sessions: a session is a long-lived shell, like a terminal tab: cd, export, functions and activated venvs ' +
      'persist between commands. Commands without session_id run in the local session "default", created on ' +
      'first use. create_local opens more (separate state, another shell/cwd/env); close_session kills ' +
      'everything a session started. If an SSH connection dies, list_sessions shows state "lost": connect again.',
    '',
    `Waiting: execute runs a command and returns when it ends (status "completed", exit_code, cwd) or as ` +
      `"partial" when output is silent for pause_timeout (default ${defaults.pauseTimeoutS} s), keeps streaming ` +
      `past total_timeout (default ${defaults.totalTimeoutS} s), matches until, or the program waits for input. ` +
      'A partial command keeps running: continue with read_output(command_id) — do not run it again — until ' +
      'status is "completed". Raise pause_timeout for commands that think silently (builds, tests); use ' +
      'until to return when a server prints "ready".',
    '',
    'Results: the text of a command result starts with one status line, then the output. A finished command ' +
      'reads "[exit 0 · 9 ms]" (plus the new cwd when it changed, and command_id when the output was cut); ' +
      'a running one says what it is doing and the one call to make next, e.g. "[running 9.1 s, quiet for ' +
      '9 s · next: read_output command_id=c_…]". The structured result carries every field; fields that say ' +
      'nothing (signal null, output_info of output that was not cut) are left out.',
    '',
    'Prompts: reason "awaiting_input" comes with prompt.kind. Answer with respond (secret:true for passwords; ' +
      'yes_no: "y"/"n"); use send_control for keys: "q" or "space" in a pager, ctrl+c to interrupt, ctrl+d for ' +
      'EOF, esc/arrows in full-screen programs (key names are case-insensitive; "C-x" and "^X" mean ctrl+x). ' +
      'read_output view:"screen" shows what a full-screen program (vim, less, htop) displays.',
    '',
    'Background work: execute background:true for servers and watchers (returns after ~0.3 s); follow with ' +
      'read_output, find ids with list_processes, stop with kill_process (kills the whole process tree). A ' +
      'command sent to a busy session runs isolated (its cd/export do not persist).',
    '',
    `Output and limits: a call returns at most max_output_chars (default ${chars}) and ${defaults.maxOutputLines} ` +
      'lines; over that it keeps the head, the tail and error lines, says what it omitted, and read_output offset/length pages the full log ' +
      `(offset < 0 = last lines; filter = grep). Timeouts are seconds, 0-${limits.maxTimeoutS}. ` +
      `At most ${limits.maxSessions} sessions and ${limits.maxLiveCommands} running commands. Errors carry a code ` +
      '(e.g. INVALID_ARGUMENT, COMMAND_NOT_FOUND, POLICY_DENIED) and a hint on what to do next.',
  ].join('\n');
}
