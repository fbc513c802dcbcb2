// The bundler's rewrite of imports of Node's built-ins into requires (scripts/bundle-bins.mjs): every
// shape rolldown writes becomes the same bindings, `node:module` and other files' imports stay, and a
// shape it does not know fails the build instead of being left as a slow import.
import { describe, expect, test } from 'vitest';
import { requireBuiltins } from '../bundle-bins.mjs';

const SHIM =
  'import { createRequire as __conchBuiltinRequire } from "node:module";\nconst __conchBuiltin = __conchBuiltinRequire(import.meta.url);\n';

describe('requireBuiltins', () => {
  test('named, renamed, default, namespace and default-plus-named imports become requires', () => {
    const code = [
      'import { readFileSync, writeFileSync as write } from "node:fs";',
      'import path from "node:path";',
      'import * as os from "node:os";',
      'import events, { once } from "node:events";',
      'use(readFileSync, write, path, os, events, once);',
    ].join('\n');
    expect(requireBuiltins(code, 'x.js')).toBe(
      `${SHIM}${[
        'const { readFileSync, writeFileSync: write } = __conchBuiltin("node:fs");',
        'const path = __conchBuiltin("node:path");',
        'const os = __conchBuiltin("node:os");',
        'const events = __conchBuiltin("node:events"); const { once } = __conchBuiltin("node:events");',
        'use(readFileSync, write, path, os, events, once);',
      ].join('\n')}`,
    );
  });

  test('keeps the shebang first, and node:module and other files as imports', () => {
    const code = [
      '#!/usr/bin/env node',
      'import module from "node:module";',
      'import { t as VERSION } from "./chunk-a.js";',
      'import { join } from "node:path";',
      'use(module, VERSION, join);',
    ].join('\n');
    const out = requireBuiltins(code, 'bin.js');
    expect(out.startsWith(`#!/usr/bin/env node\n${SHIM}`)).toBe(true);
    expect(out).toContain('import module from "node:module";');
    expect(out).toContain('import { t as VERSION } from "./chunk-a.js";');
    expect(out).toContain('const { join } = __conchBuiltin("node:path");');
  });

  test('a file without built-in imports is left as it is', () => {
    const code = 'import { a } from "./chunk-b.js";\nuse(a);';
    expect(requireBuiltins(code, 'x.js')).toBe(code);
  });

  test('an import of a built-in in a shape it does not know fails, naming the file and the import', () => {
    expect(() => requireBuiltins('import "node:fs";\n', 'odd.js')).toThrow(
      'odd.js: an import of a built-in is left as an import: import "node:fs";',
    );
    expect(() => requireBuiltins('import { x } from "fs";\n', 'bare.js')).toThrow(/bare\.js/);
  });
});
