/**
 * The start of a server bin (`conch-mcp`, `conch-opencode`): the compile cache turned on, the server's code
 * loaded after it, `main` run with the bin's arguments, and the process ended with `main`'s exit code. An
 * error `main` throws is printed as `NAME: fatal: …` and ends the process with 1.
 */

import { enableCompileCache } from './compile-cache.js';

/** What a server bin loads lazily: its `main`, resolving with the exit code. */
export interface ServerMain {
  main(argv: string[]): Promise<number>;
}

/** The line a bin prints for an error that ends it: `NAME: fatal: ` and the error's stack (or the value). */
export function fatalLine(name: string, error: unknown): string {
  return `${name}: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
}

/**
 * Starts the server bin `name` whose own `import.meta.url` is `binUrl`; `load` imports its main module (an
 * `import()` in the bin itself, so that the bundler keeps the server's code out of the entry).
 */
export function startServerBin(name: string, binUrl: string, load: () => Promise<ServerMain>): void {
  enableCompileCache(binUrl);
  load()
    .then(({ main }) => main(process.argv.slice(2)))
    .then(
      (code) => process.exit(code),
      (error: unknown) => {
        process.stderr.write(fatalLine(name, error));
        process.exit(1);
      },
    );
}
