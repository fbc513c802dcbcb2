/** Looks up programs the way a shell would, without running one. */

import { accessSync, constants, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The path of an executable regular file: `name` itself when it has a slash, else looked up in `path`
 * (default: this process's PATH).
 */
export function findExecutable(
  name: string,
  path: string | undefined = process.env.PATH,
): string | undefined {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : (path ?? '/usr/bin:/bin')
        .split(':')
        .filter((dir) => dir.startsWith('/'))
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}
