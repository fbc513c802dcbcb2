#!/usr/bin/env node
/**
 * `conch-opencode`: the delegate_task MCP server over stdio. See `main.ts` and the README for flags. The
 * bridge's code is loaded after the compile cache is on (Node 22+), so that it is compiled once.
 */
import { enableCompileCache } from '@conch/node';

enableCompileCache();
const { main } = await import('./main.js');

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `conch-opencode: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
