/**
 * The names of a driver's private files (`Driver.writePrivateFile`): relative paths of plain segments inside
 * the driver's private directory, never leaving it. One rule for every driver that keeps such a directory on
 * a host it reaches through a channel.
 */

import { ConchError, ErrorCode } from '../errors.js';

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_.][A-Za-z0-9_.-]*)*$/;

/** The absolute path of private file `name` in `dir`; INVALID_ARGUMENT for a name that could leave it. */
export function privateFilePath(dir: string, name: string): string {
  if (!NAME.test(name) || name.split('/').includes('..')) {
    throw new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid private file name: ${JSON.stringify(name)}.`);
  }
  return `${dir}/${name}`;
}

/** True when `path` names a file inside the private directory `dir` (as {@link privateFilePath} makes them). */
export function isPrivateFilePath(dir: string, path: string): boolean {
  return path.startsWith(`${dir}/`) && !path.includes('/../');
}
