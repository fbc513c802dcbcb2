#!/usr/bin/env node
/**
 * `conch-mcp`: the conch MCP server over stdio. See `main.ts` and the README for flags. The server's code is
 * loaded after the compile cache is on, so that it is compiled once, not at every start.
 */
import { startServerBin } from '@conch/node';

startServerBin('conch-mcp', import.meta.url, () => import('@conch/mcp'));
