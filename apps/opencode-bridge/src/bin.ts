#!/usr/bin/env node
/**
 * `conch-opencode`: the delegate_task MCP server over stdio. See `main.ts` and the README for flags. The
 * bridge's code is loaded after the compile cache is on, so that it is compiled once.
 */
import { startServerBin } from '@conch/node';

startServerBin('conch-opencode', import.meta.url, () => import('./main.js'));
