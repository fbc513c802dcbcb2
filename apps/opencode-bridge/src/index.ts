/** `@conch/opencode-bridge`: the `conch-opencode` MCP server (one tool, `delegate_task`). */
export { BRIDGE_VERSION, type BridgeOptions, main, parseBridgeArgs } from './main.js';
export { type BridgeTool, errorResult, registerBridgeTool } from './tool-registration.js';
