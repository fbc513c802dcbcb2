#!/usr/bin/env node
/**
 * `conch-mcp`: the conch MCP server over stdio. See `main.ts` and the README for flags. The server's code is
 * loaded after the compile cache is on (Node 22+), so that it is compiled once, not at every start.
 */
import { enableCompileCache } from '@conch/node';

enableCompileCache();
const { main } = await import('@conch/mcp');

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `conch-mcp: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
