/**
 * The CLI's version: written into the bundled bin by its bundler (scripts/bundle-bins.mjs), so that
 * `conch --version` reads no file; read from package.json (one level above both src/ and dist/) otherwise.
 */

import { createRequire } from 'node:module';

/** The app's package version, defined by the bin bundler; absent when the code runs unbundled. */
declare const __CONCH_PACKAGE_VERSION__: string | undefined;

/** The `@conch/cli` package version. */
export const CLI_VERSION: string =
  typeof __CONCH_PACKAGE_VERSION__ === 'string' ? __CONCH_PACKAGE_VERSION__ : versionFromPackageJson();

function versionFromPackageJson(): string {
  try {
    const require = createRequire(import.meta.url);
    return (require('../package.json') as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
