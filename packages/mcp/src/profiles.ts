/**
 * The tool surfaces `--profile` can select: `default` (conch's own tools) and the compatibility
 * profiles, each a table of tools over the same engine (see `profiles/profile.ts`).
 */

import type { Profile } from '@conch/service';
import { astonishProfile } from './profiles/astonish.js';
import { desktopCommanderProfile } from './profiles/desktop-commander.js';
import { interminalProfile } from './profiles/interminal.js';
import { ollamaCodeProfile } from './profiles/ollama-code.js';
import type { CompatProfile } from './profiles/profile.js';

/** The compatibility profiles by name (every profile except `default`). */
export const COMPAT_PROFILES: Readonly<Record<Exclude<Profile, 'default'>, CompatProfile>> = {
  interminal: interminalProfile,
  'desktop-commander': desktopCommanderProfile,
  astonish: astonishProfile,
  'ollama-code': ollamaCodeProfile,
};
