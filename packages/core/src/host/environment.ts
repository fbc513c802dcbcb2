/** The one rule for environment variable names that conch passes to a shell or program. */

/** What a valid name looks like, for hints: letters, digits and underscores, not starting with a digit. */
export const ENV_NAME_RULE = '[A-Za-z_][A-Za-z0-9_]*';

const ENV_NAME = new RegExp(`^${ENV_NAME_RULE}$`);

/** True when `name` can be exported by a POSIX shell ({@link ENV_NAME_RULE}). */
export function isValidEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}
