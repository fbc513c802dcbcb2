/**
 * Where the web page's built files are (`dist/page/`: its HTML, script and styles, bundled at build time by
 * `scripts/build-page.mjs`). This module sits at the top of `src` so that the path holds whether the CLI runs
 * from its compiled modules or from one bundled file in `dist/`.
 */

import { fileURLToPath } from 'node:url';

/** The directory of the web page's built files. */
export const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
