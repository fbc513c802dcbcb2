#!/usr/bin/env node
// `conch-opencode` (the MCP server whose one tool is delegate_task) from a checkout: on a fresh clone it
// first installs the bridge's dependencies (OpenCode among them) and bundles it (messages on stderr; stdout
// stays the MCP channel), then serves MCP over stdio with the given flags.
import { bootstrap } from './bootstrap.mjs';

await bootstrap('bridge');
await import('../apps/opencode-bridge/dist/bin.cjs');
