/**
 * V8's compiled code of conch's modules kept between runs, so that a command or a server starts without
 * compiling its code again (Node 22.1+ `module.enableCompileCache`; about a fifth off `conch-mcp`'s start).
 * The cache lives in a private directory (mode 0700) under the user's cache directory, not in the shared temp
 * directory Node would pick. Node 20 has no such API: there this does nothing.
 */

import { mkdirSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the compile cache lives: `$XDG_CACHE_HOME/conch/compile-cache`, else `~/.cache/conch/compile-cache`. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'conch', 'compile-cache');
}

/**
 * Turns the compile cache on for the modules loaded from now on (call it before the bin imports its main
 * module). Never throws: without a usable directory the bin simply compiles as usual.
 */
export function enableCompileCache(): void {
  const enable = (module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    const dir = compileCacheDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    enable(dir);
  } catch {
    // No cache: the code is compiled as usual.
  }
}
