/**
 * The command line of `conch-mcp` (commander). Parsing only: `config.ts` merges the result with the
 * config file and the defaults.
 */

import { DEFAULT_ENGINE_DEFAULTS, DEFAULT_LIMITS, OUTPUT_LINES_RANGE } from '@conch/core';
import { HOST_KEY_POLICIES } from '@conch/ssh/host-key-policies';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { CliSettings } from './config.js';
import { LOG_LEVELS } from './logger.js';
import { PROFILES } from './profile-names.js';
import { addSandboxOptions, sandboxFlagsFromOptions } from './sandbox-options.js';

function intOption(min: number, max = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()))
      throw new InvalidArgumentError(`expected a whole number ${range}, got ${JSON.stringify(value)}.`);
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number ${range}, got ${value}.`);
    return n;
  };
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A comma-separated list of choices, e.g. `strict,ask`. */
function choiceList(name: string, valid: readonly string[]) {
  return (value: string): string[] => {
    const items = value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (items.length === 0) {
      throw new InvalidArgumentError(`expected a comma-separated list of ${valid.join(', ')}.`);
    }
    for (const item of items) {
      if (!valid.includes(item)) {
        throw new InvalidArgumentError(
          `unknown ${name} ${JSON.stringify(item)}; valid: ${valid.join(', ')}.`,
        );
      }
    }
    return [...new Set(items)];
  };
}

function choice(name: string, valid: readonly string[]) {
  return (value: string): string => {
    if (!valid.includes(value)) {
      throw new InvalidArgumentError(`unknown ${name} ${JSON.stringify(value)}; valid: ${valid.join(', ')}.`);
    }
    return value;
  };
}

/**
 * Adds the server's flags (`--config`, `--profile`, `--cwd`, limits, policy, SSH, OpenCode, log level) to a
 * commander command: `conch-mcp` and `conch mcp` share this one definition. Read the parsed values back
 * with {@link settingsFromOptions}.
 */
export function addServerOptions(command: Command): Command {
  return addSandboxOptions(command, { required: true })
    .option('--config <path>', 'load settings from a conch.config.json (never loaded implicitly)')
    .option('--profile <name>', `tool surface: ${PROFILES.join(', ')}`, choice('profile', PROFILES))
    .option(
      '--shell <shell>',
      "shell of new local sessions (default: the user's login shell, else /bin/bash)",
    )
    .option('--cwd <dir>', "starting directory of new local sessions (default: the server's cwd)")
    .option(
      '--max-output-chars <n>',
      `server cap on max_output_chars per call (default ${DEFAULT_LIMITS.maxOutputChars})`,
      intOption(100),
    )
    .option(
      '--default-output-chars <n>',
      `max_output_chars when a call gives none (default ${DEFAULT_ENGINE_DEFAULTS.maxOutputChars})`,
      intOption(100),
    )
    .option(
      '--max-output-lines <n>',
      `most lines of output per call, ${OUTPUT_LINES_RANGE.min}-${OUTPUT_LINES_RANGE.max} (default ${DEFAULT_ENGINE_DEFAULTS.maxOutputLines})`,
      intOption(OUTPUT_LINES_RANGE.min, OUTPUT_LINES_RANGE.max),
    )
    .option('--max-sessions <n>', `most open sessions (default ${DEFAULT_LIMITS.maxSessions})`, intOption(1))
    .option(
      '--max-commands <n>',
      `most running commands (default ${DEFAULT_LIMITS.maxLiveCommands})`,
      intOption(1),
    )
    .option(
      '--ring-bytes <n>',
      `in-memory output log per command, bytes (default ${DEFAULT_LIMITS.ringChars}); the full log goes to a spill file`,
      intOption(1024),
    )
    .option(
      '--spill-dir <dir>',
      'directory for spill files (default: a new private 0700 directory under the temp dir)',
    )
    .option('--keep-spill', 'keep spill files at shutdown (default: remove them)')
    .option('--allow <prefix>', 'allow commands starting with these words (repeatable)', collect)
    .option(
      '--deny <prefix>',
      'deny commands starting with these words (repeatable; deny beats allow)',
      collect,
    )
    .option(
      '--policy-file <path>',
      'load policy rules from a JSON file: {"policy":{allow,deny}}, {allow,deny}, or Gemini/Ollama {"tools":{"core":[…],"exclude":[…]}}',
    )
    .option(
      '--audit-log <path>',
      'append one JSON line per command and decision to this file (secrets are never written)',
    )
    .option(
      '--ssh-host-key-policies <list>',
      `host key policies connect_ssh may use, comma-separated (of ${HOST_KEY_POLICIES.join(', ')}; default: all), e.g. "strict,ask" to forbid accept-new and insecure`,
      choiceList('host key policy', HOST_KEY_POLICIES),
    )
    .option(
      '--opencode-url <url>',
      'delegate_task: attach to this running OpenCode server instead of spawning one',
    )
    .option(
      '--opencode-bin <path>',
      'delegate_task: the opencode binary (default: opencode on PATH, then the bundled one)',
    )
    .option(
      '--log-level <level>',
      `stderr log level: ${LOG_LEVELS.join(', ')} (default info: start, stop, refusals and errors; debug adds a line per tool call)`,
      choice('log level', LOG_LEVELS),
    );
}

/** Builds the commander program (exported so `--help` can be tested and documented). */
export function buildProgram(version: string): Command {
  return addServerOptions(
    new Command('conch-mcp')
      .description(
        'MCP server (stdio) that gives AI agents real, persistent terminal sessions. Logs go to stderr; stdout is the MCP protocol.',
      )
      .version(version, '-V, --version'),
  )
    .helpOption('-h, --help', 'show this help')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => process.stderr.write(s),
      writeErr: (s) => process.stderr.write(s),
    });
}

/** The outcome of parsing argv: settings to run with, or an exit (help, version, usage error). */
export type ParsedArgs = { kind: 'run'; settings: CliSettings } | { kind: 'exit'; code: number };

/** Parses `argv` (without node and script). Help and version print to stderr (stdout is the protocol). */
export function parseCliArgs(argv: readonly string[], version: string): ParsedArgs {
  const program = buildProgram(version);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok =
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help';
      return { kind: 'exit', code: ok ? 0 : 2 };
    }
    throw error;
  }
  return { kind: 'run', settings: settingsFromOptions(program.opts<Record<string, unknown>>()) };
}

/** The settings given by the flags of {@link addServerOptions}, from commander's parsed options. */
export function settingsFromOptions(o: Record<string, unknown>): CliSettings {
  const settings: CliSettings = {};
  const str = (key: string) => (typeof o[key] === 'string' ? (o[key] as string) : undefined);
  const num = (key: string) => (typeof o[key] === 'number' ? (o[key] as number) : undefined);
  const assign = <K extends keyof CliSettings>(key: K, value: CliSettings[K] | undefined) => {
    if (value !== undefined) settings[key] = value;
  };
  assign('config', str('config'));
  assign('profile', str('profile'));
  assign('shell', str('shell'));
  assign('cwd', str('cwd'));
  assign('maxOutputChars', num('maxOutputChars'));
  assign('defaultOutputChars', num('defaultOutputChars'));
  assign('maxOutputLines', num('maxOutputLines'));
  assign('maxSessions', num('maxSessions'));
  assign('maxCommands', num('maxCommands'));
  assign('ringBytes', num('ringBytes'));
  assign('spillDir', str('spillDir'));
  if (o.keepSpill === true) settings.keepSpill = true;
  assign('logLevel', str('logLevel'));
  if (Array.isArray(o.allow)) settings.allow = o.allow as string[];
  if (Array.isArray(o.deny)) settings.deny = o.deny as string[];
  assign('auditLog', str('auditLog'));
  assign('policyFile', str('policyFile'));
  if (Array.isArray(o.sshHostKeyPolicies)) settings.sshHostKeyPolicies = o.sshHostKeyPolicies as string[];
  assign('opencodeUrl', str('opencodeUrl'));
  assign('opencodeBin', str('opencodeBin'));
  Object.assign(settings, sandboxFlagsFromOptions(o));
  return settings;
}
