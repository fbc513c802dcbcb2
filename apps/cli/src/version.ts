/** The CLI's version, read from its package.json (one level above both src/ and dist/). */

import { createRequire } from 'node:module';

/** The `@conch/cli` package version. */
export const CLI_VERSION: string = (() => {
  try {
    const require = createRequire(import.meta.url);
    return (require('../package.json') as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
