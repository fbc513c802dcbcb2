#!/usr/bin/env node
/**
 * `conch-mcp`: the conch MCP server over stdio. See `main.ts` and the README for flags. The server's code is
 * loaded after the compile cache is on, so that it is compiled once, not at every start. No top-level await:
 * the bundle is CommonJS (scripts/bundle-bins.mjs).
 */
import { enableCompileCache } from '@conch/node';

enableCompileCache(import.meta.url);
import('@conch/mcp')
  .then(({ main }) => main(process.argv.slice(2)))
  .then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `conch-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
