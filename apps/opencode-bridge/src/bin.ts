#!/usr/bin/env node
/**
 * `conch-opencode`: the delegate_task MCP server over stdio. See `main.ts` and the README for flags. The
 * bridge's code is loaded after the compile cache is on, so that it is compiled once. No top-level await:
 * the bundle is CommonJS (scripts/bundle-bins.mjs).
 */
import { enableCompileCache } from '@conch/node';

enableCompileCache(import.meta.url);
import('./main.js')
  .then(({ main }) => main(process.argv.slice(2)))
  .then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `conch-opencode: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
