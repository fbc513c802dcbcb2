/**
 * `@conch/delegate`: delegation of whole coding tasks to OpenCode through its server API (`opencode
 * serve` + `@opencode-ai/sdk` v2): one warm server, sessions that never block on a permission request,
 * progress, cancellation, a timeout, and a capped, honest result.
 */

export { DEFAULT_MAX_RETRIES, Delegator, type DelegatorOptions, NEVER_ASK_RULES } from './delegator.js';
export {
  bundledOpencode,
  findOpencode,
  OPENCODE_INSTALL,
  OPENCODE_INSTALL_HINT,
  opencodeOnPath,
} from './locate.js';
export {
  capOutput,
  DEFAULT_DELEGATE_AGENT,
  DEFAULT_DELEGATE_TIMEOUT_S,
  DEFAULT_OUTPUT_CAP,
  DELEGATE_AGENTS,
  type DelegateAgent,
  type DelegateResult,
  type DelegateStep,
  type DelegateTaskArgs,
  type DelegateTaskInput,
  delegateResult,
  delegateResultShape,
  delegateStep,
  delegateTaskInput,
  MAX_DELEGATE_TIMEOUT_S,
} from './params.js';
export { summarizeTurn, type TurnInput } from './result.js';
export { OpencodeServer, type OpencodeServerOptions, processGroupAlive } from './server.js';
export {
  DELEGATE_TOOL_DESCRIPTION,
  DELEGATE_TOOL_NAME,
  delegateTaskTool,
  renderDelegateResult,
} from './tool.js';
