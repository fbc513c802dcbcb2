/**
 * The server's configuration: defaults, an optional zod-validated `conch.config.json` given with
 * `--config PATH`, and command-line flags, merged in that order (flags win; `--allow`/`--deny` add to the
 * file's lists).
 *
 * A `conch.config.json` in the working directory is NOT loaded implicitly: whoever can write to a
 * directory the server happens to start in could otherwise change its policy. Pass `--config` explicitly.
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  DEFAULT_ENGINE_DEFAULTS,
  DEFAULT_LIMITS,
  type EngineDefaults,
  type EngineLimits,
  OUTPUT_LINES_RANGE,
  SANDBOX_NETWORK_WORDS,
  type SandboxRequest,
} from '@conch/core';
import { expandHomePath } from '@conch/node';
import {
  loadPolicyConfigFile,
  mergePolicyConfigs,
  type PolicyConfig,
  policyConfigFromFlags,
  policyConfigFromGeminiSettings,
  RuleSchema,
} from '@conch/policy';
import { HOST_KEY_POLICIES, type HostKeyPolicy } from '@conch/ssh/host-key-policies';
import * as z from 'zod';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { isProfile, PROFILES, type Profile, unknownProfileMessage } from './profile-names.js';
import { type SandboxFlags, sandboxRequestFromFlags } from './sandbox-options.js';

/** A configuration problem: the message is for a person and names the bad value and the valid ones. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Settings as given on the command line (all optional; see `cli-options.ts`). */
export interface CliSettings extends SandboxFlags {
  config?: string;
  profile?: string;
  shell?: string;
  cwd?: string;
  maxOutputChars?: number;
  defaultOutputChars?: number;
  maxOutputLines?: number;
  maxSessions?: number;
  maxCommands?: number;
  ringBytes?: number;
  spillDir?: string;
  keepSpill?: boolean;
  logLevel?: string;
  allow?: string[];
  deny?: string[];
  /** A policy file: conch.config.json-style `{policy}`, `{allow, deny}`, or Gemini/Ollama `{tools}` settings. */
  policyFile?: string;
  auditLog?: string;
  /** `--ssh-host-key-policies`: the host key policies `connect_ssh` may use (replaces the file's list). */
  sshHostKeyPolicies?: string[];
  /** `--opencode-url`: delegate_task attaches to this OpenCode server. */
  opencodeUrl?: string;
  /** `--opencode-bin`: delegate_task spawns this opencode binary. */
  opencodeBin?: string;
}

/** What the operator lets agents do with `connect_ssh`. */
export interface SshSettings {
  /** Host key policies an agent may choose (others are INVALID_ARGUMENT). */
  allowedHostKeyPolicies: HostKeyPolicy[];
  /** The policy of calls that give none. Always one of `allowedHostKeyPolicies`. */
  defaultHostKeyPolicy: HostKeyPolicy;
}

/** The fully resolved configuration of one server. */
export interface ResolvedConfig {
  profile: Profile;
  /** Shell of new local sessions; undefined = the user's login shell, else /bin/bash. */
  shell: string | undefined;
  /** Absolute starting directory of new local sessions; undefined = the server's cwd. */
  cwd: string | undefined;
  /** Server cap on `max_output_chars`. */
  maxOutputChars: number;
  /** `max_output_chars` when a call gives none. */
  defaultOutputChars: number;
  /** Most lines of output per call (on top of the characters). */
  maxOutputLines: number;
  maxSessions: number;
  /** Live (running) commands at once. */
  maxCommands: number;
  /** In-memory text log per command (the ring), in bytes (characters). */
  ringBytes: number;
  /** Directory for spill files; undefined = a new private directory under the OS temp dir. */
  spillDir: string | undefined;
  /** Keep spill files at shutdown. */
  keepSpill: boolean;
  logLevel: LogLevel;
  /** Command policy rules, merged from the config file, `--policy-file` and the flags. */
  policy: PolicyConfig;
  /** JSON-lines audit log path, if any. */
  auditLog: string | undefined;
  /** The config file that was loaded, if any. */
  configPath: string | undefined;
  /** `connect_ssh` settings. */
  ssh: SshSettings;
  /** Where delegate_task finds OpenCode (flags only). */
  opencode: { url?: string; bin?: string };
  /** The sandbox of local sessions (`--sandbox*` flags and the file's `sandbox`; docs/sandbox.md). */
  sandbox: SandboxSettings;
}

/** What the operator asked of sandboxes, before the rules are resolved for a session's cwd. */
export interface SandboxSettings {
  /** The server's sandbox (undefined = sessions run unsandboxed unless they ask). */
  request: SandboxRequest | undefined;
  /** Every local session must be sandboxed, never wider than the server's. */
  required: boolean;
}

const positiveInt = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int(`${what} must be a whole number`)
    .min(1, `${what} must be at least 1`);

/** The schema of `conch.config.json`. Unknown keys are an error. */
export const ConfigFileSchema = z.strictObject({
  $schema: z.string().optional(),
  profile: z.enum(PROFILES).optional(),
  shell: z.string().min(1).optional(),
  cwd: z.string().min(1).optional(),
  max_output_chars: positiveInt('max_output_chars').min(100).optional(),
  default_output_chars: positiveInt('default_output_chars').min(100).optional(),
  max_output_lines: positiveInt('max_output_lines')
    .min(OUTPUT_LINES_RANGE.min)
    .max(OUTPUT_LINES_RANGE.max)
    .optional(),
  max_sessions: positiveInt('max_sessions').optional(),
  max_commands: positiveInt('max_commands').optional(),
  ring_bytes: positiveInt('ring_bytes').min(1024).optional(),
  spill_dir: z.string().min(1).optional(),
  keep_spill: z.boolean().optional(),
  log_level: z.enum(LOG_LEVELS).optional(),
  policy: z
    .strictObject({
      allow: z.array(RuleSchema).optional(),
      deny: z.array(RuleSchema).optional(),
    })
    .optional(),
  /** Gemini CLI / Ollama Code style: `core: ["run_shell_command(git)"]`, `exclude: [...]`. */
  tools: z
    .looseObject({ core: z.array(z.string()).optional(), exclude: z.array(z.string()).optional() })
    .optional(),
  audit_log: z.string().min(1).optional(),
  /** The sandbox of local sessions: true (the defaults) or rules, and whether it is required. */
  sandbox: z
    .union([
      z.boolean(),
      z.strictObject({
        write: z.array(z.string().min(1)).optional(),
        deny_read: z.array(z.string().min(1)).optional(),
        network: z.union([z.enum(SANDBOX_NETWORK_WORDS), z.array(z.string().min(1))]).optional(),
        required: z.boolean().optional(),
      }),
    ])
    .optional(),
  ssh: z
    .strictObject({
      /** The host key policies `connect_ssh` may use, e.g. ["strict", "ask"] (default: all four). */
      allowed_host_key_policies: z.array(z.enum(HOST_KEY_POLICIES)).min(1).optional(),
      /** The policy of calls that give none (default "ask" when allowed, else the strongest allowed). */
      default_host_key_policy: z.enum(HOST_KEY_POLICIES).optional(),
    })
    .optional(),
});

/** The parsed content of `conch.config.json`. */
export type ConfigFile = z.infer<typeof ConfigFileSchema>;

function formatIssues(where: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const at = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    if (issue.code === 'unrecognized_keys') {
      const parent = issue.path.length > 0 ? `${at}: ` : '';
      const valid =
        issue.path.length === 0
          ? Object.keys(ConfigFileSchema.shape)
          : issue.path[0] === 'policy'
            ? ['allow', 'deny']
            : issue.path[0] === 'ssh'
              ? ['allowed_host_key_policies', 'default_host_key_policy']
              : issue.path[0] === 'sandbox'
                ? ['write', 'deny_read', 'network', 'required']
                : [];
      return `${parent}unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}${
        valid.length > 0 ? ` (valid keys: ${valid.join(', ')})` : ''
      }`;
    }
    if (issue.code === 'invalid_value')
      return `${at}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    return `${at}: ${issue.message}`;
  });
  return `${where}: ${lines.join('; ')}`;
}

/**
 * A path as a user wrote it (a flag or a config file value): a leading `~` is the home directory (no shell
 * expands it in a client's JSON config), and a relative path is resolved against `base`.
 */
export function userPath(path: string, base: string = process.cwd()): string {
  return resolve(base, expandHomePath(path));
}

/** Why a file or directory cannot be used, in a few words (`no such file or directory`, `permission denied`). */
function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  return (error as Error).message;
}

/** Reads and validates a config file; relative paths inside it are resolved against its directory. */
export function loadConfigFile(path: string): ConfigFile {
  const absolute = userPath(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(`--config: ${absolute}: ${reason(error)}.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`--config: ${absolute} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ConfigFileSchema.safeParse(json);
  if (!parsed.success)
    throw new ConfigError(formatIssues(`--config: invalid config file ${absolute}`, parsed.error));
  const file = parsed.data;
  const base = dirname(absolute);
  const rel = (p: string | undefined) => (p === undefined ? p : userPath(p, base));
  const out: ConfigFile = { ...file };
  const cwd = rel(file.cwd);
  const spill = rel(file.spill_dir);
  const audit = rel(file.audit_log);
  if (cwd !== undefined) out.cwd = cwd;
  if (spill !== undefined) out.spill_dir = spill;
  if (audit !== undefined) out.audit_log = audit;
  if (typeof file.sandbox === 'object') {
    const { write, deny_read } = file.sandbox;
    out.sandbox = {
      ...file.sandbox,
      ...(write === undefined ? {} : { write: write.map((p) => userPath(p, base)) }),
      ...(deny_read === undefined ? {} : { deny_read: deny_read.map((p) => userPath(p, base)) }),
    };
  }
  return out;
}

/** Where a setting came from, for error messages: the flag (`--cwd`) or the config file's key. */
function origin(flag: string, key: string, fromCli: boolean, configPath: string | undefined): string {
  return fromCli ? flag : `${key} (in ${configPath ?? 'the config file'})`;
}

function checkDirectory(where: string, path: string): string {
  const absolute = userPath(path);
  let isDir = false;
  try {
    isDir = statSync(absolute).isDirectory();
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ConfigError(`${where}: ${absolute}: ${missing ? 'no such directory' : reason(error)}.`);
  }
  if (!isDir) throw new ConfigError(`${where}: ${absolute}: not a directory.`);
  return absolute;
}

/** Merges defaults, the config file (when `cli.config` is given) and the flags; validates the result. */
export function resolveConfig(cli: CliSettings): ResolvedConfig {
  const file: ConfigFile = cli.config === undefined ? {} : loadConfigFile(cli.config);
  const profileName = cli.profile ?? file.profile ?? 'default';
  if (!isProfile(profileName)) throw new ConfigError(unknownProfileMessage(profileName));
  const logLevel = cli.logLevel ?? file.log_level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(
      `Unknown log level ${JSON.stringify(logLevel)}. Valid levels: ${LOG_LEVELS.join(', ')}.`,
    );
  }
  const maxOutputChars = cli.maxOutputChars ?? file.max_output_chars ?? DEFAULT_LIMITS.maxOutputChars;
  const defaultOutputChars = Math.min(
    cli.defaultOutputChars ?? file.default_output_chars ?? DEFAULT_ENGINE_DEFAULTS.maxOutputChars,
    maxOutputChars,
  );
  if ((cli.defaultOutputChars ?? file.default_output_chars ?? 0) > maxOutputChars) {
    throw new ConfigError(
      `--default-output-chars: ${cli.defaultOutputChars ?? file.default_output_chars} exceeds --max-output-chars (${maxOutputChars}).`,
    );
  }
  const maxOutputLines =
    cli.maxOutputLines ?? file.max_output_lines ?? DEFAULT_ENGINE_DEFAULTS.maxOutputLines;
  if (maxOutputLines < OUTPUT_LINES_RANGE.min || maxOutputLines > OUTPUT_LINES_RANGE.max) {
    throw new ConfigError(
      `--max-output-lines: ${maxOutputLines} must be from ${OUTPUT_LINES_RANGE.min} to ${OUTPUT_LINES_RANGE.max}.`,
    );
  }
  const configPath = cli.config === undefined ? undefined : userPath(cli.config);
  const cwdInput = cli.cwd ?? file.cwd;
  const spillInput = cli.spillDir ?? file.spill_dir;
  const shellInput = cli.shell ?? file.shell;
  const auditInput = cli.auditLog ?? file.audit_log;
  return {
    profile: profileName,
    shell: shellInput === undefined ? undefined : expandHomePath(shellInput),
    cwd:
      cwdInput === undefined
        ? undefined
        : checkDirectory(origin('--cwd', 'cwd', cli.cwd !== undefined, configPath), cwdInput),
    maxOutputChars,
    defaultOutputChars,
    maxOutputLines,
    maxSessions: cli.maxSessions ?? file.max_sessions ?? DEFAULT_LIMITS.maxSessions,
    maxCommands: cli.maxCommands ?? file.max_commands ?? DEFAULT_LIMITS.maxLiveCommands,
    ringBytes: cli.ringBytes ?? file.ring_bytes ?? DEFAULT_LIMITS.ringChars,
    spillDir: spillInput === undefined ? undefined : userPath(spillInput),
    keepSpill: cli.keepSpill ?? file.keep_spill ?? false,
    logLevel: logLevel as LogLevel,
    policy: mergePolicyConfigs(
      { allow: file.policy?.allow ?? [], deny: file.policy?.deny ?? [] },
      file.tools === undefined
        ? { allow: [], deny: [] }
        : policyConfigFromGeminiSettings({ tools: file.tools }),
      cli.policyFile === undefined ? { allow: [], deny: [] } : loadPolicyFile(cli.policyFile),
      policyConfigFromFlags({ allow: cli.allow ?? [], deny: cli.deny ?? [] }),
    ),
    auditLog: auditInput === undefined ? undefined : userPath(auditInput),
    configPath,
    ssh: resolveSshSettings(cli, file),
    opencode: {
      ...(cli.opencodeUrl === undefined ? {} : { url: cli.opencodeUrl }),
      ...(cli.opencodeBin === undefined ? {} : { bin: expandHomePath(cli.opencodeBin) }),
    },
    sandbox: resolveSandboxSettings(cli, file, cwdInput === undefined ? process.cwd() : userPath(cwdInput)),
  };
}

/** The sandbox flags over the file's `sandbox` (flags win key by key; `required` from either). */
function resolveSandboxSettings(cli: CliSettings, file: ConfigFile, cwd: string): SandboxSettings {
  const fromFile = file.sandbox;
  const fileRequest: SandboxRequest | undefined =
    fromFile === undefined || fromFile === false
      ? undefined
      : fromFile === true
        ? true
        : {
            ...(fromFile.write === undefined ? {} : { write: fromFile.write }),
            ...(fromFile.deny_read === undefined ? {} : { deny_read: fromFile.deny_read }),
            ...(fromFile.network === undefined ? {} : { network: fromFile.network }),
          };
  const required =
    cli.sandboxRequired === true || (typeof fromFile === 'object' && fromFile.required === true);
  const fromFlags = sandboxRequestFromFlags(cli, cwd);
  let request: SandboxRequest | undefined =
    fromFlags === undefined
      ? fileRequest
      : fileRequest === undefined || fileRequest === true
        ? fromFlags
        : fromFlags === true
          ? fileRequest
          : { ...fileRequest, ...fromFlags };
  if (required && request === undefined) request = true;
  return { request, required };
}

/** Which policy a call without `host_key_policy` gets when the operator names none: ask, else the strongest allowed. */
const DEFAULT_POLICY_PREFERENCE: readonly HostKeyPolicy[] = ['ask', 'strict', 'accept-new', 'insecure'];

/** `--ssh-host-key-policies` (which replaces the file's list) and the file's `ssh` section. */
function resolveSshSettings(cli: CliSettings, file: ConfigFile): SshSettings {
  const valid = HOST_KEY_POLICIES as readonly string[];
  for (const policy of cli.sshHostKeyPolicies ?? []) {
    if (!valid.includes(policy)) {
      throw new ConfigError(
        `Unknown SSH host key policy ${JSON.stringify(policy)}. Valid policies: ${HOST_KEY_POLICIES.join(', ')}.`,
      );
    }
  }
  const listed = (cli.sshHostKeyPolicies as HostKeyPolicy[] | undefined) ??
    file.ssh?.allowed_host_key_policies ?? [...HOST_KEY_POLICIES];
  if (listed.length === 0) {
    throw new ConfigError(
      `No SSH host key policy is allowed; allow at least one of ${HOST_KEY_POLICIES.join(', ')}.`,
    );
  }
  // In the canonical order (default first, weakest last), without duplicates.
  const allowed = HOST_KEY_POLICIES.filter((p) => listed.includes(p));
  const wanted = file.ssh?.default_host_key_policy;
  if (wanted !== undefined && !allowed.includes(wanted)) {
    throw new ConfigError(
      `ssh.default_host_key_policy ${JSON.stringify(wanted)} is not among the allowed SSH host key policies (${allowed.join(', ')}).`,
    );
  }
  const fallback = DEFAULT_POLICY_PREFERENCE.find((p) => allowed.includes(p)) ?? 'strict';
  return { allowedHostKeyPolicies: allowed, defaultHostKeyPolicy: wanted ?? fallback };
}

function loadPolicyFile(path: string): PolicyConfig {
  const absolute = userPath(path);
  try {
    readFileSync(absolute);
  } catch (error) {
    throw new ConfigError(`--policy-file: ${absolute}: ${reason(error)}.`);
  }
  try {
    return loadPolicyConfigFile(absolute);
  } catch (error) {
    throw new ConfigError(`--policy-file: ${absolute}: ${(error as Error).message}`);
  }
}

/** The engine limits a resolved configuration asks for. */
export function engineLimits(config: ResolvedConfig): Partial<EngineLimits> {
  return {
    maxOutputChars: config.maxOutputChars,
    maxSessions: config.maxSessions,
    maxLiveCommands: config.maxCommands,
    ringChars: config.ringBytes,
  };
}

/** The engine defaults a resolved configuration asks for. */
export function engineDefaults(config: ResolvedConfig): Partial<EngineDefaults> {
  return {
    maxOutputChars: config.defaultOutputChars,
    maxOutputLines: config.maxOutputLines,
    ...(config.shell === undefined ? {} : { shell: config.shell }),
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
  };
}
