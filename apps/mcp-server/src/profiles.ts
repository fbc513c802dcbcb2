/**
 * The tool surfaces `--profile` can select: `default` (conch's own tools) and the compatibility
 * profiles, each a table of tools over the same engine (see `profiles/profile.ts`).
 */

import { astonishProfile } from './profiles/astonish.js';
import { desktopCommanderProfile } from './profiles/desktop-commander.js';
import { interminalProfile } from './profiles/interminal.js';
import { ollamaCodeProfile } from './profiles/ollama-code.js';
import type { CompatProfile } from './profiles/profile.js';

/** Every profile name, `default` first. */
export const PROFILES = ['default', 'interminal', 'desktop-commander', 'astonish', 'ollama-code'] as const;

/** One of {@link PROFILES}. */
export type Profile = (typeof PROFILES)[number];

/** The compatibility profiles by name (every profile except `default`). */
export const COMPAT_PROFILES: Readonly<Record<Exclude<Profile, 'default'>, CompatProfile>> = {
  interminal: interminalProfile,
  'desktop-commander': desktopCommanderProfile,
  astonish: astonishProfile,
  'ollama-code': ollamaCodeProfile,
};

/** The message for an unknown profile name, listing the valid ones. */
export function unknownProfileMessage(name: string): string {
  return `Unknown profile ${JSON.stringify(name)}. Valid profiles: ${PROFILES.join(', ')}.`;
}

/** True when `name` is one of {@link PROFILES}. */
export function isProfile(name: string): name is Profile {
  return (PROFILES as readonly string[]).includes(name);
}
