#!/usr/bin/env node
/**
 * `conch`: the command line. See `program.ts` and docs/cli.md. `conch --version` answers before the
 * program (commander and the commands) is loaded: a version check should cost what starting node costs.
 * No top-level await: the bundle is CommonJS (scripts/bundle-bins.mjs).
 */
import { enableCompileCache, fatalLine } from '@conch/node';
import { CLI_VERSION } from './version.js';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // What commander prints for the same flags.
  process.stdout.write(`${CLI_VERSION}\n`);
} else {
  // The program is loaded after the compile cache is on, so that it is compiled once.
  enableCompileCache(import.meta.url);
  import('./program.js')
    .then(({ runCli }) => runCli(argv))
    .then(
      (code) => {
        process.exitCode = code;
        // Let stdout drain, then leave even if a handle (a finished daemon socket) lingers.
        process.stdout.write('', () => process.exit(code));
      },
      (error: unknown) => {
        process.stderr.write(fatalLine('conch', error));
        process.exit(1);
      },
    );
}
