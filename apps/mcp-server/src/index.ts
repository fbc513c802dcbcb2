/**
 * @conch/mcp-server — conch's MCP face. The `conch-mcp` binary is `bin.ts`; this entry lets other
 * programs embed the server or extend it with more tools.
 */

/** The command line parser of `conch-mcp`. */
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
  type SshSettings,
} from './config.js';
/** `delegate_task` for conch-mcp's settings (undefined when no OpenCode can be found). */
export { type DelegateTool, delegateTool } from './delegate-tool.js';
/** The local engine (driver, spill store, screen, SessionManager) built from a configuration. */
export { createLocalEngine, type EngineGuards, type LocalEngine } from './engine.js';
/** The server instructions text. */
export { serverInstructions } from './instructions.js';
/** The stderr logger. */
export { createLogger, LOG_LEVELS, type Logger, type LogLevel, silentLogger } from './logger.js';
/** Runs the stdio server (what `conch-mcp` does). */
export { type MainHooks, main, SHUTDOWN_DEADLINE_MS, serveStdio } from './main.js';
export type { AnyToolDefinition, CompatProfile } from './profiles/profile.js';
/** The tool surfaces `--profile` accepts. */
export { COMPAT_PROFILES, PROFILES, type Profile } from './profiles.js';
/** Result and error schemas (zod) of the tools. */
export {
  CommandResultShape,
  type ErrorInfo,
  ErrorInfoSchema,
  outputSchemaFor,
  ProcessSchema,
  SessionSchema,
} from './schemas.js';
/** Options, result and the extra-tool extension point of {@link createConchServer}. */
export type { ConchServer, ConchServerOptions, ToolRegistrar, ToolRegistrarContext } from './server.js';
/** Creates an McpServer exposing a SessionManager through the default-profile tools. */
export { assertProfile, createConchServer, SERVER_VERSION } from './server.js';
/** `connect_ssh`: the SSH tool registrar (registered by default by `main`). */
export {
  type ConnectSshResult,
  clientCanElicit,
  registerSshTools,
  SSH_TOOL_NAMES,
  type SshToolsOptions,
  sshTools,
} from './ssh-tools.js';
/** A tool definition for {@link registerConchTool}. */
export type { ConchToolDefinition, ToolCallContext } from './tool-kit.js';
/** Registers one tool with conch's validation, result, error, progress and logging guarantees. */
export { errorResult, invalidArgumentFromZod, lenientTwin, registerConchTool } from './tool-kit.js';
/** Registers the ten local default-profile tools on a server (connect_ssh comes from `sshTools`). */
export { DEFAULT_TOOL_NAMES, registerDefaultTools } from './tools.js';
