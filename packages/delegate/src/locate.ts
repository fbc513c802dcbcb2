/**
 * Finding the `opencode` binary: an explicit path, then PATH, then an `opencode-ai` package installed next to
 * conch (an optional peer dependency: conch does not install it, since most users who delegate have OpenCode
 * already and it weighs 177 MB).
 */

import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

/** How to install OpenCode, as one clause (the faces build their hints with it). */
export const OPENCODE_INSTALL = 'npm install -g opencode-ai, or see https://opencode.ai';

/** What users run to get OpenCode when none is found. */
export const OPENCODE_INSTALL_HINT = `Install OpenCode (${OPENCODE_INSTALL}), or pass --opencode-bin PATH or --opencode-url URL.`;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The `opencode` found on `PATH`, if any. */
export function opencodeOnPath(path: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'opencode');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The binary of an `opencode-ai` package installed next to conch, if its platform binary is there. */
export function bundledOpencode(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve('opencode-ai/package.json');
    const candidate = join(dirname(pkg), 'bin', 'opencode.exe');
    return isExecutable(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The opencode binary to run: `explicit` when given (it must be executable), else PATH, else an
 * `opencode-ai` package installed next to conch. Undefined when there is none.
 */
export function findOpencode(explicit?: string): string | undefined {
  if (explicit !== undefined) return isExecutable(explicit) ? explicit : undefined;
  return opencodeOnPath() ?? bundledOpencode();
}
