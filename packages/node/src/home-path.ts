/**
 * A leading `~` in a path given by a user (a flag, a config file, a tool argument): no shell expands it
 * when the path comes from a client's JSON configuration, so conch does.
 */

import { homedir } from 'node:os';
import { join } from 'node:path';

/** Expands a leading `~` or `~/` to the home directory; `~user` and any other path are returned unchanged. */
export function expandHomePath(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}
