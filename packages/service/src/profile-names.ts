/**
 * The names of the tool surfaces `--profile` can select: `default` (conch's own tools) and the
 * compatibility profiles (whose tool tables live in `@conch/mcp`).
 */

/** Every profile name, `default` first. */
export const PROFILES = ['default', 'interminal', 'desktop-commander', 'astonish', 'ollama-code'] as const;

/** One of {@link PROFILES}. */
export type Profile = (typeof PROFILES)[number];

/** The message for an unknown profile name, listing the valid ones. */
export function unknownProfileMessage(name: string): string {
  return `Unknown profile ${JSON.stringify(name)}. Valid profiles: ${PROFILES.join(', ')}.`;
}

/** True when `name` is one of {@link PROFILES}. */
export function isProfile(name: string): name is Profile {
  return (PROFILES as readonly string[]).includes(name);
}
