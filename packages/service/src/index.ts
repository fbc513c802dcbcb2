/**
 * @conch/service — what every face of conch (the MCP server, the CLI) shares: the verbs as methods of
 * {@link ConchService} (plain JSON in and out, with a call context), configuration (the
 * `conch.config.json` schema and the flags→config resolution), the local engine built from it, the
 * `connect_ssh` sequence, the stderr logger and the profile names.
 */

/** What a face passes to each verb besides its parameters: cancellation, progress, asking the person. */
export type { ServiceCallContext, ServiceQuestion } from './call-context.js';

/** The command line flags of the server faces (`conch-mcp`, `conch mcp`) and their parser. */
export {
  addServerOptions,
  buildProgram,
  type ParsedArgs,
  parseCliArgs,
  settingsFromOptions,
} from './cli-options.js';
/** Configuration: config file schema, merge of file and flags. */
export {
  type CliSettings,
  ConfigError,
  type ConfigFile,
  ConfigFileSchema,
  engineDefaults,
  engineLimits,
  loadConfigFile,
  type ResolvedConfig,
  resolveConfig,
  type SandboxSettings,
  type SshSettings,
} from './config.js';
/** The local engine (driver, spill store, screen, SessionManager) built from a configuration. */
/** The `create_container` sequence and where the container engine is. */
export {
  ContainerSessions,
  type ContainerSetup,
  type CreateContainerParams,
  locateContainerEngine,
} from './container-sessions.js';
export { createLocalEngine, type EngineGuards, type LocalEngine, type SandboxSetup } from './engine.js';
/** The stderr logger. */
export { createLogger, LOG_LEVELS, type Logger, type LogLevel, silentLogger } from './logger.js';
/** Command line options derived from the parameter table. */
export { DEFAULT_PARAMETER_CONTEXT, parameterOption } from './parameter-options.js';
/** The parameters of the verbs, each defined once (faces derive their schemas and options from it). */
export {
  type ParameterDefinition,
  type ParameterValue,
  parameterDescription,
  VERB_PARAMETERS,
  type VerbWithParameters,
} from './parameters.js';
/** The profile names `--profile` accepts. */
export { isProfile, PROFILES, type Profile, unknownProfileMessage } from './profile-names.js';
/** The sandbox flags (shared by the servers and `conch exec`), their translation, and this host's facts. */
export {
  addSandboxOptions,
  parseSandboxNetwork,
  type SandboxFlags,
  sandboxFlagsFromOptions,
  sandboxHostFacts,
  sandboxRequestFromFlags,
} from './sandbox-options.js';
/** The verbs as methods of one service object, and its assembly from a configuration. */
export {
  type AttachOptions,
  type CheckCommandParams,
  type CloseSessionParams,
  ConchService,
  type ConchServiceOptions,
  type CreateLocalParams,
  type CreateServiceOptions,
  createConchService,
  defaultGuards,
  opencodeDelegator,
  SHUTDOWN_KILL_GRACE_S,
} from './service.js';
/** The `connect_ssh` sequence: host key policies, the question to the person, the banner. */
export {
  abortSignalOf,
  type ConnectSshParams,
  type ConnectSshResult,
  cleanBanner,
  connectSshSession,
  HOST_KEY_QUESTION_TIMEOUT_MS,
  hostKeyQuestionText,
  type SshPolicies,
  type SshServiceOptions,
  sshPolicies,
} from './ssh-connect.js';
