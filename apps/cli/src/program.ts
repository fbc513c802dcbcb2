/**
 * The `conch` command line (commander): every command talks to the per-user daemon as an MCP client,
 * so sessions persist between invocations. Exit codes: the command's own when it completed, 0 while it
 * still runs (with a hint naming its id), 2 for usage errors, 1 for conch errors.
 */

import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { OPENCODE_INSTALL } from '@conch/delegate';
import {
  addSandboxOptions,
  addServerOptions,
  parameterOption,
  sandboxFlagsFromOptions,
  sandboxRequestFromFlags,
  settingsFromOptions,
} from '@conch/service';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { nonUtf8Arguments } from './argv-text.js';
// The servers (the daemon, `conch mcp` over stdio or HTTP), `conch attach`, `conch web` and the configuration
// are loaded by the commands that use them, so that the client commands start without the MCP server, the
// engine, zod and their schemas (see scripts/bundle-bins.mjs).
import { connectDaemon, type DaemonStart, daemonStatus, ensureDaemon, stopDaemon } from './daemon-client.js';
import { ConnectionClosedError, type DaemonRpc } from './daemon-rpc.js';
import { HTTP_DEFAULTS } from './http-limits.js';
import { daemonPaths } from './paths.js';
import {
  type CommandResult,
  printCommandResult,
  processTable,
  sessionTable,
  stillRunningHint,
} from './render.js';
import { readSecret } from './secret-input.js';
import { ExecInterrupted, execStreaming, streamsExec } from './stream-exec.js';
import { escapeControls, stylesFor, terminalSafeJson } from './terminal-output.js';
import { ConchCliError, callTool } from './tool-call.js';
import { CLI_VERSION } from './version.js';

/** Exit code for usage errors. */
export const EXIT_USAGE = 2;
/** Exit code for conch errors. */
export const EXIT_ERROR = 1;
/** Exit code of `conch exec` interrupted by ctrl+c (128 + SIGINT, as a shell reports it). */
export const EXIT_INTERRUPTED = 130;

/** A usage error (exit 2) with its message. */
function usage(message: string): CommanderError {
  return new CommanderError(EXIT_USAGE, 'conch.usage', message);
}

/** Says on stderr that a new daemon replaced one that had died (its sessions are gone). */
function sayRestart(start: DaemonStart): void {
  if (start.replaced !== 'crashed') return;
  const styles = stylesFor(process.stderr);
  process.stderr.write(
    `${styles.yellow('[new daemon]')} ${styles.dim(`the conch daemon had stopped without shutting down (see its log: ${daemonPaths().logFile}); a new one started: the sessions and commands of before are gone`)}\n`,
  );
}

/** True for the error of a call whose daemon connection closed while it waited. */
function connectionClosed(error: unknown): boolean {
  return error instanceof ConnectionClosedError;
}

/** A parser of a whole number ≥ 1 for `flag`. */
function positive(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(
        `${flag} expects a whole number of at least 1, got ${JSON.stringify(value)}.`,
      );
    return n;
  };
}

/** The bearer token in `file` (its first line); a usage error when it cannot be read or is empty. */
function readToken(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usage(
      `--token-file: ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
    );
  }
  const token = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (token === '') throw usage(`--token-file: ${file} is empty; put the token on its first line.`);
  return token;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n))
    throw new InvalidArgumentError(`expected an integer, got ${JSON.stringify(value)}.`);
  return n;
}

/**
 * Runs `work` with a daemon client, mapping conch errors to exit code 1 (and a daemon that went away
 * during the call to a message saying so), and ctrl+c of a streaming `conch exec` to exit code 130.
 */
async function withDaemon(
  json: boolean,
  work: (call: Caller, client: DaemonRpc) => Promise<number>,
): Promise<number> {
  const connection = await connectDaemon();
  sayRestart(connection.start);
  const styles = stylesFor(process.stderr);
  try {
    return await work(
      (name, args, spinner) =>
        callTool(connection.client, name, args, json || spinner === undefined ? {} : { spinner }),
      connection.client,
    );
  } catch (error) {
    if (error instanceof ConchCliError) {
      if (json) printJson(error.structured ?? { error: error.error });
      else {
        process.stderr.write(
          `${styles.red('conch:')} ${escapeControls(error.error.message, { newlines: 'keep' })}\n`,
        );
        if (error.error.hint)
          process.stderr.write(`${styles.dim(escapeControls(error.error.hint, { newlines: 'keep' }))}\n`);
      }
      return EXIT_ERROR;
    }
    if (error instanceof ExecInterrupted) {
      process.stderr.write(
        `\r\n${styles.yellow(`[interrupted: ${escapeControls(error.commandId)} is still running]`)} ${styles.dim(stillRunningHint(error.commandId))}\n`,
      );
      return EXIT_INTERRUPTED;
    }
    if (connectionClosed(error)) {
      process.stderr.write(
        `${styles.red('conch:')} the conch daemon stopped while this command waited (it may have crashed; see its log: ${daemonPaths().logFile}). Its sessions and commands are gone; the next conch command starts a new daemon.\n`,
      );
      return EXIT_ERROR;
    }
    throw error;
  } finally {
    await connection.close();
  }
}

type Caller = <T = Record<string, unknown>>(
  name: string,
  args: Record<string, unknown>,
  spinner?: string,
) => Promise<T>;

/** JSON on stdout, with no raw control character a terminal would act on (the same JSON value). */
/** Commander's collector of a repeatable option. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function printJson(value: unknown): void {
  process.stdout.write(`${terminalSafeJson(value)}\n`);
}

/** Prints a command result as JSON or for a person; returns the exit code. */
function finishCommand(result: CommandResult, json: boolean): number {
  if (json) {
    printJson(result);
    return result.status === 'completed' && typeof result.exit_code === 'number' ? result.exit_code : 0;
  }
  return printCommandResult(result);
}

/**
 * The session `conch exec --sandbox*` runs in: `--session` (default `sandbox`) by id or name, created
 * sandboxed with the flags' rules (the cwd writable) when it does not exist; an existing session keeps
 * its sandbox (refused when it has none). Without the flags, `--session` as given.
 */
async function sandboxedSession(call: Caller, options: Record<string, unknown>): Promise<string | undefined> {
  const asked = sandboxRequestFromFlags(sandboxFlagsFromOptions(options), process.cwd());
  const wanted = typeof options.session === 'string' ? options.session : undefined;
  if (asked === undefined) return wanted;
  const name = wanted ?? 'sandbox';
  const { sessions } = await call<{
    sessions: Array<{ session_id: string; name: string; state: string; sandbox?: unknown }>;
  }>('list_sessions', {});
  const found = sessions.find((s) => (s.session_id === name || s.name === name) && s.state !== 'closed');
  if (found) {
    if (found.sandbox === undefined) {
      const error = {
        code: 'POLICY_DENIED',
        message: `Session ${name} runs unsandboxed, and a session's sandbox never changes.`,
        hint: 'Name another session with --session (it is created sandboxed), or close this one.',
      };
      throw new ConchCliError(error, { error });
    }
    return found.session_id;
  }
  const created = await call<{ session_id: string }>('create_local', {
    name,
    cwd: process.cwd(),
    sandbox: asked,
  });
  return created.session_id;
}

/** Wait options shared by exec, read, respond and key. */
function waitArgs(options: { pause?: number; total?: number; until?: string }): Record<string, unknown> {
  return {
    ...(options.pause === undefined ? {} : { pause_timeout: options.pause }),
    ...(options.total === undefined ? {} : { total_timeout: options.total }),
    ...(options.until === undefined ? {} : { until: options.until }),
  };
}

function addWaitOptions(command: Command): Command {
  return command
    .addOption(parameterOption('execute', 'pause_timeout', '--pause <seconds>'))
    .addOption(parameterOption('execute', 'total_timeout', '--total <seconds>'))
    .addOption(parameterOption('execute', 'until', '--until <regex>'))
    .option('--json', 'print the result as JSON');
}

/** Builds the `conch` program. `setExit` receives the exit code of the command that ran. */
/** The top-level commands, in the order of the help text. */
export const COMMAND_NAMES = [
  'exec',
  'read',
  'respond',
  'key',
  'ps',
  'kill',
  'sessions',
  'close',
  'ssh',
  'container',
  'attach',
  'web',
  'check',
  'delegate',
  'mcp',
  'daemon',
] as const;

/**
 * The command line. With `only` (one of {@link COMMAND_NAMES}), just that command is defined: a run of one
 * command (`conch exec …`) does not build the options and help of all the others (see `runCli`).
 */
export function buildProgram(
  setExit: (code: number) => void,
  only?: (typeof COMMAND_NAMES)[number],
): Command {
  const wants = (name: (typeof COMMAND_NAMES)[number]) => only === undefined || only === name;
  const program = new Command('conch')
    .description(
      'Real terminals for AI agents and the people who supervise them: persistent shell sessions kept by a per-user daemon.',
    )
    .version(CLI_VERSION)
    .showHelpAfterError()
    .exitOverride();

  const run = (work: () => Promise<number>) => async () => setExit(await work());

  if (wants('exec')) {
    addWaitOptions(
      addSandboxOptions(
        program
          .command('exec')
          .description(
            'Run a command in a session (the default session unless --session) and wait for it to finish or go quiet. With --sandbox*, in a sandboxed session (--session, default "sandbox"), created with those rules if it does not exist.',
          )
          .argument('<command...>', 'the command line (put it after --)')
          .option('-s, --session <id>', 'session id or name (default: the default session)')
          .option('-b, --background', 'run it as a background process and return at once')
          .option('--cwd <dir>', 'run it in this directory'),
        { required: false },
      ),
    ).action((words: string[], options) =>
      run(() =>
        withDaemon(options.json === true, async (call, client) => {
          const session = await sandboxedSession(call, options);
          const args = {
            command: words.join(' '),
            ...(session ? { session_id: session } : {}),
            ...(options.background ? { background: true } : {}),
            ...(options.cwd ? { cwd: options.cwd } : {}),
          };
          const result = streamsExec(options)
            ? await execStreaming(client, args, waitArgs(options), words.join(' '))
            : await call<CommandResult>('execute', { ...args, ...waitArgs(options) }, words.join(' '));
          return finishCommand(result, options.json === true);
        }),
      )(),
    );
  }

  if (wants('read')) {
    addWaitOptions(
      program
        .command('read')
        .description(
          "Read a command's output: what is new since the last read, or a page with --offset/--length.",
        )
        .argument('<id>', 'the command id')
        .addOption(parameterOption('read_output', 'offset', '--offset <line>'))
        .addOption(parameterOption('read_output', 'length', '--length <lines>'))
        .option('--screen', 'show the terminal screen instead of the text')
        .option('-f, --follow', 'keep reading until the command ends'),
    ).action((id: string, options) =>
      run(() =>
        withDaemon(options.json === true, async (call) => {
          const args = {
            command_id: id,
            ...waitArgs(options),
            ...(options.offset === undefined ? {} : { offset: options.offset }),
            ...(options.length === undefined ? {} : { length: options.length }),
            ...(options.screen ? { view: 'screen' } : {}),
          };
          for (;;) {
            const result = await call<CommandResult>('read_output', args, id);
            if (
              options.follow &&
              !options.json &&
              result.status === 'partial' &&
              result.state !== 'awaiting_input'
            ) {
              if (result.output)
                process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
              continue;
            }
            return finishCommand(result, options.json === true);
          }
        }),
      )(),
    );
  }

  if (wants('respond')) {
    addWaitOptions(
      program
        .command('respond')
        .description(
          'Type a line into a command waiting for input (reads it from the terminal without echo when TEXT is omitted).',
        )
        .argument('<id>', 'the command id')
        .argument('[text]', 'what to type (Enter is pressed after it)')
        .option(
          '--secret',
          'a password: never echoed or logged; give no TEXT: it is read from the terminal without echo, or from stdin',
        )
        .option('--no-enter', 'do not press Enter after the text'),
    ).action((id: string, text: string | undefined, options) =>
      run(async () => {
        if (options.secret === true && text !== undefined) {
          throw usage(
            '--secret takes no TEXT on the command line (every local user can read the arguments of a process): leave TEXT out, and type it at the prompt (no echo) or pipe it on stdin.',
          );
        }
        const input = text ?? (await readSecret(`Input for ${escapeControls(id)}: `));
        return withDaemon(options.json === true, async (call) =>
          finishCommand(
            await call<CommandResult>(
              'respond',
              {
                command_id: id,
                text: input,
                enter: options.enter !== false,
                secret: options.secret === true || text === undefined,
                ...waitArgs(options),
              },
              id,
            ),
            options.json === true,
          ),
        );
      })(),
    );
  }

  if (wants('key')) {
    addWaitOptions(
      program
        .command('key')
        .description('Press keys in a command (ctrl+c, esc, up, f1, alt+x, …).')
        .argument('<id>', 'the command id')
        .argument('<keys...>', 'key names, pressed in order'),
    ).action((id: string, keys: string[], options) =>
      run(() =>
        withDaemon(options.json === true, async (call) =>
          finishCommand(
            await call<CommandResult>(
              'send_control',
              { command_id: id, key: keys.length === 1 ? keys[0] : keys, ...waitArgs(options) },
              id,
            ),
            options.json === true,
          ),
        ),
      )(),
    );
  }

  if (wants('ps')) {
    program
      .command('ps')
      .description('List commands (running and finished) in the daemon.')
      .option('-s, --session <id>', 'only this session')
      .option('--filter <text>', 'only commands whose text or id contains this')
      .option('--running', 'only commands still running')
      .option('--json', 'print JSON')
      .action((options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const result = await call<{ processes: Parameters<typeof processTable>[0] }>('list_processes', {
              ...(options.session ? { session_id: options.session } : {}),
              ...(options.filter ? { filter: options.filter } : {}),
              ...(options.running ? { include_finished: false } : {}),
            });
            if (options.json) printJson(result);
            else process.stdout.write(`${processTable(result.processes)}\n`);
            return 0;
          }),
        )(),
      );
  }

  if (wants('kill')) {
    program
      .command('kill')
      .description('Kill a command and everything it started (SIGTERM, then SIGKILL after the grace time).')
      .argument('<id>', 'the command id')
      .addOption(parameterOption('kill_process', 'signal', '--signal <name>'))
      .addOption(parameterOption('kill_process', 'grace_s', '--grace <seconds>'))
      .option('--json', 'print JSON')
      .action((id: string, options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const result = await call<{ result: string; survivors: number[] }>('kill_process', {
              command_id: id,
              ...(options.signal ? { signal: options.signal } : {}),
              ...(options.grace === undefined ? {} : { grace_s: options.grace }),
            });
            if (options.json) printJson(result);
            else
              process.stdout.write(
                `${escapeControls(`${id}: ${result.result}${result.survivors.length ? ` (survivors: ${result.survivors.join(' ')})` : ''}`)}\n`,
              );
            return result.result === 'stop_unconfirmed' ? EXIT_ERROR : 0;
          }),
        )(),
      );
  }

  if (wants('sessions')) {
    program
      .command('sessions')
      .description("List the daemon's sessions.")
      .option('--json', 'print JSON')
      .action((options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const result = await call<{ sessions: Parameters<typeof sessionTable>[0] }>('list_sessions', {});
            if (options.json) printJson(result);
            else process.stdout.write(`${sessionTable(result.sessions)}\n`);
            return 0;
          }),
        )(),
      );
  }

  if (wants('close')) {
    program
      .command('close')
      .description('Close a session: its shell and every command in it are killed.')
      .argument('<session>', 'the session id or name')
      .option('--json', 'print JSON')
      .action((session: string, options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const result = await call<{ killed_command_ids: string[] }>('close_session', {
              session_id: session,
            });
            if (options.json) printJson(result);
            else
              process.stdout.write(
                `${escapeControls(`closed ${session}${result.killed_command_ids.length ? ` (killed ${result.killed_command_ids.join(' ')})` : ''}`)}\n`,
              );
            return 0;
          }),
        )(),
      );
  }

  if (wants('ssh')) {
    program
      .command('ssh')
      .description('Open a persistent SSH session in the daemon.')
      .argument('<destination>', '[user@]host[:port] (host may be an alias from ~/.ssh/config)')
      .option('-i, --identity <file>', 'private key file')
      .option('--host-key-policy <policy>', 'ask | accept-new | strict | insecure')
      .option('--name <name>', 'a name for the session')
      .option('--json', 'print JSON')
      .action((destination: string, options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const match = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(destination);
            if (!match)
              throw new CommanderError(
                EXIT_USAGE,
                'conch.usage',
                `Not a destination: ${JSON.stringify(destination)}. Expected [user@]host[:port].`,
              );
            const result = await call<{ session_id: string; banner?: string }>(
              'connect_ssh',
              {
                host: match[2]?.replace(/^\[|\]$/g, ''),
                ...(match[1] ? { username: match[1] } : {}),
                ...(match[3] ? { port: Number(match[3]) } : {}),
                ...(options.identity ? { private_key_path: options.identity } : {}),
                ...(options.hostKeyPolicy ? { host_key_policy: options.hostKeyPolicy } : {}),
                ...(options.name ? { name: options.name } : {}),
              },
              `connecting to ${destination}`,
            );
            if (options.json) printJson(result);
            else process.stdout.write(`${escapeControls(result.session_id)}\n`);
            return 0;
          }),
        )(),
      );
  }

  if (wants('container')) {
    program
      .command('container')
      .description(
        'Open a persistent shell session inside a container in the daemon: a new one from IMAGE (removed when the session closes unless --keep), or a running one with --attach (left running).',
      )
      .argument('[image]', 'the image to create a container from (must be on the engine; conch never pulls)')
      .option('--attach <container>', 'attach to this running container (name or id) instead')
      .option('--mount <HOST:PATH[:ro]>', 'bind mount into a new container (repeatable)', collect, [])
      .addOption(parameterOption('create_container', 'network', '--network <network>'))
      .option('--workdir <dir>', "the shell's starting directory in the container")
      .option('--user <user>', 'the user the shell runs as')
      .option('--keep', 'keep the new container when the session closes')
      .option('--name <name>', 'a name for the session')
      .option('--json', 'print JSON')
      .action((image: string | undefined, options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            if ((image === undefined) === (options.attach === undefined))
              throw new CommanderError(
                EXIT_USAGE,
                'conch.usage',
                'Give an IMAGE to create a container from, or --attach NAME for a running one (not both).',
              );
            const result = await call<{ session_id: string }>(
              'create_container',
              {
                ...(image === undefined ? { container: options.attach } : { image }),
                ...(options.mount.length > 0 ? { mounts: options.mount } : {}),
                ...(options.network ? { network: options.network } : {}),
                ...(options.workdir ? { workdir: options.workdir } : {}),
                ...(options.user ? { user: options.user } : {}),
                ...(options.keep ? { keep: true } : {}),
                ...(options.name ? { name: options.name } : {}),
              },
              image === undefined ? `attaching to ${options.attach}` : `creating a container from ${image}`,
            );
            if (options.json) printJson(result);
            else process.stdout.write(`${escapeControls(result.session_id)}\n`);
            return 0;
          }),
        )(),
      );
  }

  if (wants('attach')) {
    program
      .command('attach')
      .description(
        "Watch a session live in this terminal and type into it (take over from the agent); detach with ctrl+]. The session's size follows this window while attached. Under a command policy the view is read-only unless --take-over is given.",
      )
      .argument('<session>', 'the session id or name (e.g. default; conch sessions lists them)')
      .option(
        '--take-over',
        'type into the session even under a command policy (keystrokes are not checked by it)',
      )
      .action((session: string, options: { takeOver?: boolean }) =>
        run(async () =>
          (await import('./attach-command.js')).attachSession(session, {
            takeOver: options.takeOver === true,
          }),
        )(),
      );
  }

  if (wants('web')) {
    program
      .command('web')
      .description(
        "Serve a page with every session live (terminals, command timelines, the policy's decisions) and open it in your browser; take over a session from there. The daemon serves it on 127.0.0.1; the link carries its token.",
      )
      .option(
        '--http <host:port>',
        'serve it here (a bare port binds 127.0.0.1; default: 127.0.0.1, a free port)',
      )
      .addOption(
        new Option(
          '--token <token>',
          'refused: a token on the command line is readable by every local user (use --token-file)',
        ).hideHelp(),
      )
      .option('--token-file <file>', 'require this token (its first line) instead of a generated one')
      .option('--no-open', 'only print the link, do not open a browser')
      .option('--stop', 'stop serving the page')
      .action(
        (options: { http?: string; token?: string; tokenFile?: string; open: boolean; stop?: boolean }) =>
          run(async () => {
            if (options.token !== undefined) {
              throw usage(
                '--token would put the token in the arguments of the process, which every local user can read (/proc/PID/cmdline). Put it in a file (--token-file FILE), or give none and a token is generated.',
              );
            }
            if (options.http !== undefined) {
              const { parseListen } = await import('./http-guards.js');
              try {
                parseListen(options.http);
              } catch (error) {
                throw usage((error as Error).message);
              }
            }
            const token = options.tokenFile === undefined ? undefined : readToken(options.tokenFile);
            const { serveWebPage } = await import('./web-command.js');
            return serveWebPage({
              ...(options.http === undefined ? {} : { listen: options.http }),
              ...(token === undefined ? {} : { token }),
              open: options.open,
              ...(options.stop ? { stop: true } : {}),
            });
          })(),
      );
  }

  if (wants('check')) {
    program
      .command('check')
      .description('Show what the command policy decides for a command line, without running it.')
      .argument('<command...>', 'the command line')
      .option('-s, --session <id>', 'the session it would run in')
      .option('--json', 'print JSON')
      .action((words: string[], options) =>
        run(() =>
          withDaemon(options.json === true, async (call) => {
            const result = await call<{ decision?: string; allowed?: boolean; reason?: string }>(
              'check_command',
              {
                command: words.join(' '),
                ...(options.session ? { session_id: options.session } : {}),
              },
            );
            if (options.json) printJson(result);
            else {
              const { decision, ...rest } = result as Record<string, unknown>;
              process.stdout.write(
                `${escapeControls(String(decision ?? (result.allowed ? 'allow' : 'deny')))}\n`,
              );
              for (const [key, value] of Object.entries(rest)) {
                if (value !== undefined && value !== null && key !== 'allowed')
                  process.stdout.write(
                    `  ${escapeControls(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)}\n`,
                  );
              }
            }
            return 0;
          }),
        )(),
      );
  }

  if (wants('delegate')) {
    program
      .command('delegate')
      .description(
        'Hand a whole coding task to OpenCode and wait for its result (needs OpenCode: an opencode binary on PATH when the daemon starts).',
      )
      .argument('<task...>', 'what OpenCode should do')
      .option('--dir <dir>', 'the working directory of the task (default: the current directory)')
      .option('--agent <agent>', 'build (default), plan or explore')
      .option('--model <provider/model>', 'the model, as provider/model')
      .option('-s, --session <id>', 'continue this OpenCode session')
      .addOption(
        new Option('--timeout <seconds>', 'abort the task after this many seconds').argParser(integer),
      )
      .option('--json', 'print the result as JSON')
      .action((words: string[], options) =>
        run(() =>
          withDaemon(options.json === true, async (call, client) => {
            // The daemon offers delegate_task only when it found OpenCode at its start.
            const { tools } = await client.request<{ tools: Array<{ name: string }> }>('tools/list');
            if (!tools.some((tool) => tool.name === 'delegate_task')) {
              throw new ConchCliError(
                {
                  code: 'DELEGATE_UNAVAILABLE',
                  message: `delegation needs OpenCode, which the daemon did not find: install it (${OPENCODE_INSTALL}), then restart the daemon (conch daemon stop).`,
                },
                undefined,
              );
            }
            const result = await call<{
              status: string;
              session_id?: string;
              output?: string;
              steps?: Array<{ type: string; tool?: string; title?: string; status: string }>;
              files_changed?: string[];
              error?: string;
            }>(
              'delegate_task',
              {
                task: words.join(' '),
                dir: resolvePath(options.dir ?? process.cwd()),
                ...(options.agent ? { agent: options.agent } : {}),
                ...(options.model ? { model: options.model } : {}),
                ...(options.session ? { session_id: options.session } : {}),
                ...(options.timeout === undefined ? {} : { timeout_s: options.timeout }),
              },
              'delegating to OpenCode',
            );
            if (options.json) printJson(result);
            else {
              if (result.output)
                process.stdout.write(
                  escapeControls(result.output.replace(/\n?$/, '\n'), { newlines: 'keep' }),
                );
              for (const step of result.steps ?? [])
                process.stderr.write(
                  `  ${escapeControls(`${step.tool ?? step.type}${step.title ? ` ${step.title}` : ''} (${step.status})`)}\n`,
                );
              for (const file of result.files_changed ?? [])
                process.stderr.write(`  changed ${escapeControls(file)}\n`);
              if (result.error)
                process.stderr.write(`conch: ${escapeControls(result.error, { newlines: 'keep' })}\n`);
              process.stderr.write(
                `${escapeControls(`[${result.status}${result.session_id ? ` · session ${result.session_id}` : ''}]`)}\n`,
              );
            }
            return result.status === 'success' ? 0 : EXIT_ERROR;
          }),
        )(),
      );
  }

  if (wants('mcp')) {
    addServerOptions(
      program
        .command('mcp')
        .description(
          "Serve MCP: over stdio (default), or Streamable HTTP with --http; with --daemon the tools act on the daemon's sessions. Takes conch-mcp's flags (not with --daemon, whose sessions live in the daemon).",
        ),
    )
      .option('--daemon', "use the daemon's sessions (they outlive this MCP client)")
      .option(
        '--http <host:port>',
        'serve MCP Streamable HTTP here instead of stdio (a bare port binds 127.0.0.1)',
      )
      .addOption(
        new Option(
          '--token <token>',
          'refused: a token on the command line is readable by every local user (use $CONCH_MCP_TOKEN or --token-file)',
        ).hideHelp(),
      )
      .option(
        '--token-file <file>',
        'read the bearer token HTTP clients must send from this file (default: $CONCH_MCP_TOKEN, else generated and printed)',
      )
      .addOption(
        new Option('--http-idle-timeout <seconds>', 'close an MCP session idle this long')
          .default(HTTP_DEFAULTS.idleTimeoutS)
          .argParser(positive('--http-idle-timeout')),
      )
      .addOption(
        new Option(
          '--http-max-sessions <n>',
          'most MCP sessions; beyond it the least recently used idle one goes',
        )
          .default(HTTP_DEFAULTS.maxSessions)
          .argParser(positive('--http-max-sessions')),
      )
      .addOption(
        new Option('--http-max-body <bytes>', 'largest request body (413 beyond it)')
          .default(HTTP_DEFAULTS.maxBodyBytes)
          .argParser(positive('--http-max-body')),
      )
      .addOption(
        new Option(
          '--http-max-connections <n>',
          'most connections; beyond it the oldest one not in a request is closed',
        )
          .default(HTTP_DEFAULTS.maxConnections)
          .argParser(positive('--http-max-connections')),
      )
      .action((options) =>
        run(async () => {
          if (options.http && options.daemon) {
            throw usage('--http and --daemon cannot be combined yet: choose one.');
          }
          if (options.token !== undefined) {
            throw usage(
              '--token would put the token in the arguments of the process, which every local user can read (/proc/PID/cmdline). Pass it in $CONCH_MCP_TOKEN or in a file (--token-file FILE), or give neither and a token is generated and printed.',
            );
          }
          const {
            daemon,
            http,
            token: _token,
            tokenFile,
            httpIdleTimeout,
            httpMaxSessions,
            httpMaxBody,
            httpMaxConnections,
            ...serverOptions
          } = options;
          const settings = settingsFromOptions(serverOptions);
          if (daemon) {
            if (Object.keys(settings).length > 0) {
              throw usage(
                `--daemon serves the daemon's sessions with the daemon's settings: ${Object.keys(
                  serverOptions,
                )
                  .map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)
                  .join(', ')} cannot be combined with it.`,
              );
            }
            return (await import('./mcp-command.js')).relayStdioToDaemon();
          }
          if (http) {
            // The HTTP door and the configuration load with this command, not at start-up (never import the
            // service's index here: as a lazily loaded entry of its own, the bundler would merge the modules the
            // CLI shares with it, the whole engine included, into the file every command loads).
            const { httpConfig, parseListen, serveHttp } = await import('./http-server.js');
            try {
              parseListen(http);
            } catch (error) {
              throw usage((error as Error).message);
            }
            const token = tokenFile === undefined ? process.env.CONCH_MCP_TOKEN : readToken(tokenFile);
            const resolved = httpConfig(settings);
            if ('usage' in resolved) throw usage(resolved.usage);
            const config = resolved.config;
            return serveHttp({
              listen: http,
              config,
              ...(token ? { token } : {}),
              limits: {
                idleTimeoutS: httpIdleTimeout,
                maxSessions: httpMaxSessions,
                maxBodyBytes: httpMaxBody,
                maxConnections: httpMaxConnections,
              },
            });
          }
          return (await import('./mcp-command.js')).serveMcp(settings);
        })(),
      );
  }

  if (wants('daemon')) {
    const daemon = program
      .command('daemon')
      .description('Manage the per-user daemon that keeps sessions alive.');
    daemon
      .command('start')
      .description('Start the daemon (it also starts on first use).')
      .action(() =>
        run(async () => {
          const start = await ensureDaemon();
          sayRestart(start);
          const status = await daemonStatus();
          process.stdout.write(
            `${start.started ? 'started' : 'already running'} (pid ${status.pid ?? '?'}, ${status.socket})\n`,
          );
          return 0;
        })(),
      );
    daemon
      .command('stop')
      .description('Stop the daemon: every session and command in it is killed.')
      .action(() =>
        run(async () => {
          process.stdout.write((await stopDaemon()) ? 'stopped\n' : 'not running\n');
          return 0;
        })(),
      );
    daemon
      .command('status')
      .description('Is the daemon running (pid, socket, log)?')
      .option('--json', 'print JSON')
      .action((options) =>
        run(async () => {
          const status = await daemonStatus();
          if (options.json) printJson(status);
          else
            process.stdout.write(
              status.running
                ? `running (pid ${status.pid ?? '?'}, ${status.socket})\n`
                : status.socketless
                  ? `not running: daemon pid ${status.pid} lost its socket ${status.socket} and is stopping (conch daemon stop stops it now)\n`
                  : `not running (${status.socket})\n`,
            );
          return status.running ? 0 : 3;
        })(),
      );
    addServerOptions(
      daemon
        .command('run', { hidden: true })
        .description(
          "Run the daemon in the foreground (what first use starts in the background); takes conch-mcp's flags.",
        ),
    )
      .option(
        '--viewer-backlog <bytes>',
        'bytes queued for one connection beyond which live view output is dropped (default 1 MiB)',
        positive('--viewer-backlog'),
      )
      .action((options) =>
        run(async () => {
          const { runDaemon } = await import('./daemon.js');
          const { viewerBacklog, ...serverOptions } = options;
          return runDaemon({
            settings: settingsFromOptions(serverOptions),
            ...(viewerBacklog === undefined ? {} : { viewerBacklogBytes: viewerBacklog }),
          });
        })(),
      );
  }

  return program;
}

/** Runs the CLI with `argv` (without node and script) and resolves with the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  // Node replaces bytes that are not UTF-8 with U+FFFD: an argument holding one may not be what was typed.
  if (argv.some((arg) => arg.includes('\uFFFD'))) {
    const bad = nonUtf8Arguments(argv.length);
    if (bad.length > 0) {
      for (const { index, shown } of bad)
        process.stderr.write(
          `conch: argument ${index + 1} is not valid UTF-8: ${shown}. conch passes text and cannot carry these bytes unchanged; write them inside the command instead (e.g. $'\\xff' in bash, or a glob).\n`,
        );
      return EXIT_USAGE;
    }
  }
  let code = 0;
  // `conch exec …` defines exec alone; `conch`, `conch --help`, `conch help …` or a typo define them all.
  const first = argv[0];
  const only = COMMAND_NAMES.find((name) => name === first);
  const program = buildProgram((value) => {
    code = value;
  }, only);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return 0;
      if (error.code === 'conch.usage') process.stderr.write(`conch: ${escapeControls(error.message)}\n`);
      return EXIT_USAGE;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`conch: ${escapeControls(message, { newlines: 'keep' })}\n`);
    return EXIT_ERROR;
  }
}
