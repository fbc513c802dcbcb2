/** The one rule for environment variable names that conch passes to a shell or program. */

import { ConchError, ErrorCode } from '../errors.js';

/** What a valid name looks like, for hints: letters, digits and underscores, not starting with a digit. */
export const ENV_NAME_RULE = '[A-Za-z_][A-Za-z0-9_]*';

const ENV_NAME = new RegExp(`^${ENV_NAME_RULE}$`);

/** True when `name` can be exported by a POSIX shell ({@link ENV_NAME_RULE}). */
export function isValidEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/** Throws INVALID_ARGUMENT naming the first name in `env` that breaks {@link ENV_NAME_RULE}. */
export function assertEnvNames(env: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(env)) {
    if (!isValidEnvName(name)) {
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Invalid environment variable name: ${JSON.stringify(name)}.`,
        {
          hint: `Names are letters, digits and underscores, not starting with a digit (${ENV_NAME_RULE}).`,
        },
      );
    }
  }
}
