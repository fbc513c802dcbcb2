/**
 * @conch/mcp-server — the `conch-mcp` binary (`bin.ts`). The server itself lives in `@conch/mcp` and
 * the configuration and engine in `@conch/service`; this entry re-exports them for programs that
 * embed the server through this package.
 */

/** Options, result and the extra-tool extension point of {@link createConchServer}. */
/** A tool definition for {@link registerConchTool}. */
export type {
  AnyToolDefinition,
  CompatProfile,
  ConchServer,
  ConchServerOptions,
  ConchToolDefinition,
  ToolCallContext,
  ToolRegistrar,
  ToolRegistrarContext,
} from '@conch/mcp';
/** `delegate_task`: the registrar (registers the tool when the service can delegate). */
/** The server instructions text. */
/** Runs the stdio server (what `conch-mcp` does). */
/** The tool surfaces `--profile` accepts. */
/** Result and error schemas (zod) of the tools. */
/** Creates an McpServer exposing a ConchService through the default-profile tools. */
/** `connect_ssh`: the SSH tool registrar (registered by default by `main`). */
/** Registers one tool with conch's validation, result, error, progress and logging guarantees. */
/** Registers the ten local default-profile tools on a server (connect_ssh comes from `sshTools`). */
export {
  assertProfile,
  COMPAT_PROFILES,
  CommandResultShape,
  type ConnectSshResult,
  clientCanElicit,
  createConchServer,
  DEFAULT_TOOL_NAMES,
  delegateTools,
  type ErrorInfo,
  ErrorInfoSchema,
  errorResult,
  invalidArgumentFromZod,
  lenientTwin,
  type MainHooks,
  main,
  outputSchemaFor,
  ProcessSchema,
  registerConchTool,
  registerDefaultTools,
  registerSshTools,
  SERVER_VERSION,
  SessionSchema,
  SHUTDOWN_DEADLINE_MS,
  SSH_TOOL_NAMES,
  serverInstructions,
  serveStdio,
  sshTools,
} from '@conch/mcp';
/** The command line parser of `conch-mcp`. */
/** Configuration: config file schema, merge of file and flags. */
/** The local engine (driver, spill store, screen, SessionManager) built from a configuration. */
/** The stderr logger. */
export {
  addServerOptions,
  buildProgram,
  type CliSettings,
  ConfigError,
  type ConfigFile,
  ConfigFileSchema,
  createLocalEngine,
  createLogger,
  type EngineGuards,
  engineDefaults,
  engineLimits,
  LOG_LEVELS,
  type LocalEngine,
  type Logger,
  type LogLevel,
  loadConfigFile,
  type ParsedArgs,
  PROFILES,
  type Profile,
  parseCliArgs,
  type ResolvedConfig,
  resolveConfig,
  type SshSettings,
  settingsFromOptions,
  silentLogger,
} from '@conch/service';
