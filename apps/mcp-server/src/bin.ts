#!/usr/bin/env node
/**
 * `conch-mcp`: the conch MCP server over stdio. See `main.ts` and the README for flags.
 */
import { main } from '@conch/mcp';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `conch-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
