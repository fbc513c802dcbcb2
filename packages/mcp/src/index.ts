/**
 * @conch/mcp — conch's MCP face: the tools over the engine, their schemas, rendering and instructions,
 * the compatibility profiles and the bounded stdio server that `conch-mcp` and `conch mcp` both run.
 */

/** The service call context of a tool call (cancellation, progress, asking through elicitation). */
export { clientCanElicit, serviceCall } from './call-context.js';
/** `delegate_task`: the registrar (registers the tool when the service can delegate). */
/** `create_container`: the container tool registrar (registered by `main` when an engine is offered). */
export { containerTools } from './container-tool.js';
export { delegateTools } from './delegate-tool.js';
/** The direct path of conch's tool calls past the SDK's request handling, over any transport. */
export { withDirectToolCalls } from './direct-tool-calls.js';
/** An error as an MCP tool result (`isError`, text, `structuredContent.error`). */
export { errorInfo, errorResult } from './error-result.js';
/** The server instructions text. */
export { serverInstructions } from './instructions.js';
/** The one guarded newline-delimited JSON-RPC transport (stdio, the daemon's socket, the relay). */
export {
  ConchLineTransport,
  ConchStdioTransport,
  type LineTransportOptions,
  MAX_BACKLOG_BYTES,
  MAX_REQUEST_LINE_BYTES,
} from './line-transport.js';
/** Runs the stdio server (what `conch-mcp` does). */
export { type MainHooks, main, SHUTDOWN_DEADLINE_MS, serveStdio } from './main.js';
export type { AnyToolDefinition, CompatProfile } from './profiles/profile.js';
/** The tool surfaces `--profile` accepts. */
export { COMPAT_PROFILES } from './profiles.js';
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
/** Creates an McpServer exposing a ConchService through the default-profile tools. */
export { assertProfile, createConchServer, SERVER_VERSION } from './server.js';
/** `connect_ssh`: the SSH tool registrar (registered by default by `main`). */
export { registerSshTools, SSH_TOOL_NAMES, sshTools } from './ssh-tools.js';
/** A tool definition for {@link registerConchTool}. */
export type { ConchToolDefinition, ToolCallContext } from './tool-kit.js';
/** Registers one tool with conch's validation, result, error, progress and logging guarantees. */
export { invalidArgumentFromZod, lenientTwin, registerConchTool } from './tool-kit.js';
/** Registers the ten local default-profile tools on a server (connect_ssh comes from `sshTools`). */
export { DEFAULT_TOOL_NAMES, registerDefaultTools } from './tools.js';
/** How the MCP face words the operations hints point at (tool names, or the client's declared words). */
export { isVocabulary, MCP_VOCABULARY, VOCABULARY_CAPABILITY, vocabularyOf } from './vocabulary.js';
