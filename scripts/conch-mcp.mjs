#!/usr/bin/env node
// The main job: the conch MCP server over stdio, with a default local session. On a fresh clone it first
// installs the server's dependencies and bundles it (messages on stderr; stdout stays the MCP channel).
import { bootstrap } from './bootstrap.mjs';

await bootstrap('server');
await import('../apps/mcp-server/dist/bin.cjs');
