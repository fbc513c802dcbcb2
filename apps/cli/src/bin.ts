#!/usr/bin/env node
/**
 * `conch`: the command line. See `program.ts` and docs/cli.md.
 */
import { runCli } from './program.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Let stdout drain, then leave even if a handle (a finished daemon socket) lingers.
    process.stdout.write('', () => process.exit(code));
  },
  (error: unknown) => {
    process.stderr.write(
      `conch: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
