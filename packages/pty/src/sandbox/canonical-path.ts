/**
 * A path as the file system knows it, for the sandboxes' rules: a mount (bubblewrap) or a rule (Seatbelt)
 * lands on where a symbolic link points, so both sandboxes name every path this way.
 */

import { realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { normalizePath } from '@conch/core';

/**
 * The path as the file system knows it: symbolic links resolved in its longest existing part (a missing
 * path under `/tmp` is under `/private/tmp`), normalised.
 */
export function canonicalPath(path: string): string {
  const normal = normalizePath(path);
  try {
    return realpathSync(normal);
  } catch {
    const parent = dirname(normal);
    if (parent === normal) return normal;
    const base = canonicalPath(parent);
    return base === '/' ? `/${basename(normal)}` : `${base}/${basename(normal)}`;
  }
}
