/**
 * The parameters of the service's verbs, each defined once: its rule (type, unit, range, default; from
 * `PARAMETER_RULES` in `@conch/core`, which the engine applies) and its description. Every face derives
 * from this table: the MCP input schemas, the CLI's options, and the compatibility profiles (which rename
 * a parameter or give it another default, and reuse the rest).
 *
 * Descriptions are what a model reads on every listing: terse, front-loaded, and never repeating what the
 * schema already says (type, range, default).
 */

import {
  type Configured,
  PARAMETER_RULES,
  type ParameterContext,
  type ParameterRule,
  type RuledParameter,
  type SandboxRequest,
} from '@conch/core';
import { HOST_KEY_POLICIES } from '@conch/ssh/host-key-policies';

/** One parameter of a verb: its rule and what a caller is told about it. */
export interface ParameterDefinition extends ParameterRule {
  /** What it means, in a sentence or two (a function when it names the configuration). */
  readonly description: Configured<string>;
  /** True when a call must give it. */
  readonly required?: boolean;
  /** A secret (a password): never echoed, logged or returned. */
  readonly writeOnly?: boolean;
}

/** A parameter under the core rule `rule`, with its description (and whether it is required or secret). */
function param<
  R extends RuledParameter,
  E extends { required?: true; writeOnly?: true } = Record<never, never>,
>(
  rule: R,
  description: Configured<string>,
  extra?: E,
): (typeof PARAMETER_RULES)[R] & { readonly description: Configured<string> } & E {
  return { ...PARAMETER_RULES[rule], description, ...(extra as E) };
}

/** Parameters several verbs share, with the same meaning everywhere. */
const shared = {
  session_id: param(
    'session_id',
    'A session id, or a session name. Default: the local session "default" (made on first use).',
  ),
  command_id: param('command_id', 'From execute (or list_processes).', {
    required: true,
  }),
  pause_timeout: param(
    'pause_timeout',
    'Seconds of output silence before returning "partial"; each byte restarts it; 0 = at once.',
  ),
  total_timeout: param(
    'total_timeout',
    'Seconds before returning while output streams: binds only while output arrives.',
  ),
  until: param(
    'until',
    'RE2 regex: return early when output of this call matches, e.g. "listening on|ready".',
  ),
  max_output_chars: param(
    'max_output_chars',
    'Output budget; over it, the head (~20%), tail (~80%) and error lines are kept.',
  ),
  // The same three as execute's, for the verbs that wait like it (whose description says so).
  pause_timeout_again: param('pause_timeout', 'Silence wait, as for execute.'),
  total_timeout_again: param('total_timeout', 'Streaming wait, as for execute.'),
  until_again: param('until', 'RE2 regex, as for execute.'),
  max_output_chars_again: param('max_output_chars', 'Output budget, as for execute.'),
  cols: param('cols', 'Terminal width in columns.'),
  rows: param('rows', 'Terminal height in rows.'),
  name: param('name', 'A label for listings. Default: the session_id.'),
};

/** The session-shape parameters of the verbs that open a session. */
const sessionShape = { cols: shared.cols, rows: shared.rows, name: shared.name };

/** The parameters of each verb, in the order a face lists them. */
export const VERB_PARAMETERS = {
  execute: {
    command: param(
      'command',
      'Command line(s) as typed at a prompt (pipes, &&, heredocs, scripts); up to 1 MiB.',
      { required: true },
    ),
    session_id: shared.session_id,
    pause_timeout: shared.pause_timeout,
    total_timeout: shared.total_timeout,
    background: param('background', 'Run in the background (own terminal); returns after a ~0.3 s probe.'),
    cwd: param('cwd', 'Run there; foreground: as if "cd DIR" came first. Default: the session\'s cwd.'),
    until: shared.until,
    max_output_chars: shared.max_output_chars,
  },
  read_output: {
    command_id: shared.command_id,
    pause_timeout: shared.pause_timeout_again,
    total_timeout: shared.total_timeout_again,
    until: shared.until_again,
    offset: param('offset', 'Page the log, no wait: >= 0 = 0-based line, < 0 = the last |offset| lines.'),
    length: param('length', 'Lines per page (offset, filter).'),
    view: param(
      'view',
      'text: ANSI removed; screen: the rendered screen (vim, less, htop); raw: escapes kept.',
    ),
    filter: param('filter', 'RE2 regex: only matching log lines, numbered, paged.'),
    max_output_chars: shared.max_output_chars_again,
  },
  respond: {
    command_id: shared.command_id,
    text: param('text', 'Text to type (empty: just Enter); up to 1 MiB. Never logged.', { required: true }),
    enter: param('enter', 'Press Enter after the text; false types without submitting.'),
    secret: param('secret', 'Passwords, tokens: never echoed, logged, audited or returned.'),
    pause_timeout: shared.pause_timeout_again,
    total_timeout: shared.total_timeout_again,
    until: shared.until_again,
  },
  send_control: {
    command_id: shared.command_id,
    key: param(
      'key',
      'Key(s) in order: ctrl+a..z, ctrl+[ \\ ] ^ _ @, esc, tab, shift+tab, enter, space, backspace, delete, insert, up, down, left, right, home, end, pageup, pagedown, f1..f12, alt+<char>, or one character.',
      { required: true },
    ),
    pause_timeout: shared.pause_timeout_again,
    total_timeout: shared.total_timeout_again,
    until: shared.until_again,
  },
  list_processes: {
    filter: param('process_filter', 'Only commands whose text or id contains this (any case).'),
    session_id: param('session_id', 'Only the commands of this session (id or name). Default: all.'),
    include_finished: param('include_finished', 'Include ended commands; false = running only.'),
  },
  kill_process: {
    command_id: shared.command_id,
    signal: param('signal', 'The first signal to send.'),
    grace_s: param('grace_s', 'Seconds after the first signal before SIGKILL.'),
  },
  create_local: {
    shell: param(
      'shell',
      (c) =>
        `Shell program: bash, zsh or sh (name or path). Default: ${c.defaults.shell ?? 'the login shell, else /bin/bash'}.`,
    ),
    cwd: param(
      'cwd',
      (c) => `Starting directory (must exist). Default: ${c.defaults.cwd ?? "the server's cwd"}.`,
    ),
    env: param('env', 'Extra environment variables, e.g. {"NODE_ENV":"test"}.'),
    ...sessionShape,
    sandbox: param(
      'sandbox',
      'OS sandbox, fixed for the session (default: the server\'s). true: writes only in cwd and /tmp, ~/.ssh etc. unreadable, no network; or {write, deny_read, network: "none"|"all"|[hosts]}; false: none.',
    ),
  },
  list_sessions: {},
  close_session: {
    session_id: param('session_id', 'The session to close, by id or name ("default" included).', {
      required: true,
    }),
  },
  check_command: {
    command: param('command', 'The command line to check, as execute would get it.', { required: true }),
    session_id: param(
      'session_id',
      'Only checked to exist and audited: the policy is the same in every session.',
    ),
  },
  connect_ssh: {
    host: param('host', 'Name, IP, ~/.ssh/config alias (its settings honoured) or user@host:port.', {
      required: true,
    }),
    port: param('port', "sshd's port; omitted: an alias's configured Port."),
    username: param('username', "Remote user. Default: the ssh config's User, else the local one."),
    password: param(
      'password',
      'Tried after keys; sent only to a verified host; never logged, echoed or kept.',
      { writeOnly: true },
    ),
    private_key_path: param(
      'private_key_path',
      'Private key file on this machine, tried first (then the agent, default keys).',
    ),
    passphrase: param('passphrase', 'Decrypts the private key; never logged, echoed or kept.', {
      writeOnly: true,
    }),
    use_agent: param('use_agent', "Also try the ssh-agent's keys ($SSH_AUTH_SOCK)."),
    host_key_policy: {
      type: 'enum' as const,
      values: HOST_KEY_POLICIES,
      // The default and the allowed subset are the operator's (SshSettings): the face adds them.
      description:
        'For an UNKNOWN host key: ask the person (refused if unable), accept-new records it, strict refuses, insecure accepts unverified.',
    },
    known_hosts_path: param(
      'known_hosts_path',
      "known_hosts file. Default: the ssh config's UserKnownHostsFile, else ~/.ssh/known_hosts.",
    ),
    connect_timeout: param(
      'connect_timeout',
      'Seconds to connect and log in (asking the person excluded), else SSH_UNREACHABLE.',
    ),
    keepalive_interval: param(
      'keepalive_interval',
      'Seconds between keepalives; 3 unanswered = session "lost". 0 = off.',
    ),
    ...sessionShape,
  },
} as const satisfies Record<string, Record<string, ParameterDefinition>>;

/** A verb that has a parameter table. */
export type VerbWithParameters = keyof typeof VERB_PARAMETERS;

/** The description of a parameter in an engine's configuration. */
export function parameterDescription(definition: ParameterDefinition, context: ParameterContext): string {
  const { description } = definition;
  return typeof description === 'function' ? description(context) : description;
}

/** The TypeScript type of a parameter's value. */
export type ParameterValue<D> = D extends { type: 'string' }
  ? string
  : D extends { type: 'integer' | 'number' }
    ? number
    : D extends { type: 'boolean' }
      ? boolean
      : D extends { type: 'enum'; values: readonly (infer V)[] }
        ? V
        : D extends { type: 'keys' }
          ? string | string[]
          : D extends { type: 'string_map' }
            ? Record<string, string>
            : D extends { type: 'sandbox' }
              ? SandboxRequest
              : never;
