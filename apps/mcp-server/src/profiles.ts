/** Tool surfaces `--profile` can select. Only `default` (SPEC §2) exists so far; SPEC §9 lists more to come. */
export const PROFILES = ['default'] as const;

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
