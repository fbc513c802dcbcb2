#!/usr/bin/env node
/**
 * Bundles the `bin` entries of one app (apps/cli, apps/mcp-server, apps/opencode-bridge) with rolldown, so
 * that a command starts without resolving and compiling hundreds of module files:
 *
 * - the entry `dist/bin.js` holds what every start needs (`conch --version` nothing more); what the entry
 *   loads right after with `await import(…)` is one file (the main chunk), and what a command loads only
 *   when it runs (the daemon, `conch attach`, ssh2, the OpenCode SDK, the screen emulator) stays in files of
 *   its own (`dist/chunk-*.js`, next to the entry so that `import.meta.url` means the same in each);
 * - the workspace packages are bundled from their sources (the `conch-source` condition), so a bin needs no
 *   built `dist/` of its dependencies;
 * - native modules stay external and load from node_modules when first used: the terminal binary
 *   (`@lydell/node-pty`) and `ssh2` (its optional native parts). The app must declare what its bundle loads
 *   at run time in `dependencies`; the build fails otherwise.
 *
 * Why rolldown rather than esbuild: rolldown splits after tree shaking, so an import from a package's index
 * (`@conch/core`, `@conch/service`) brings only what is used into the start-up file; esbuild assigns whole
 * files reachable through the index to the entry's chunks, which put zod, the policy parser and the engine in
 * `conch --version`'s path.
 *
 * The library entries (`dist/index.js` + `.d.ts`) stay tsc's output: the build runs tsc first, then this.
 *
 * Usage: `node ../../scripts/bundle-bins.mjs` from an app directory (its `build` script), or
 * `bundleBins(appDir)` (the bootstrap's quick build). Prints nothing unless something is wrong.
 */

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Packages loaded from node_modules at run time instead of bundled (native code). */
export const EXTERNAL = ['@lydell/node-pty', 'ssh2'];

/** The prefix of the lazily loaded parts' file names in `dist/`. */
const CHUNK_PREFIX = 'chunk-';

/**
 * Node's built-ins are required, not imported: an ES import of a built-in builds a module facade of all its
 * exports, which runs every lazy getter (`import … from 'node:fs'` loads the streams) before the command
 * does anything; `require` hands over the same object without. `node:module`, which gives `createRequire`,
 * stays an import. (Bundled CommonJS code reaches built-ins through rolldown's own `__require`.)
 */
const BUILTIN_IMPORT =
  /^import\s+(?:([\w$]+)\s*(?:,\s*)?)?(?:\*\s+as\s+([\w$]+)\s*)?(?:\{([^}]*)\}\s*)?from\s*"(node:[\w/]+)";?[ \t]*$/gm;
const BUILTIN_REQUIRE = '__conchBuiltin';
const BUILTIN_REQUIRE_SHIM = `import { createRequire as __conchBuiltinRequire } from "node:module";\nconst ${BUILTIN_REQUIRE} = __conchBuiltinRequire(import.meta.url);\n`;

/**
 * `code` with its imports of Node built-ins other than `node:module` turned into `require`s (see
 * {@link BUILTIN_IMPORT}). Throws when an import of a built-in is left in a shape this does not know.
 */
export function requireBuiltins(code, fileName) {
  let changed = false;
  const out = code.replace(BUILTIN_IMPORT, (statement, defaultName, namespace, named, specifier) => {
    if (specifier === 'node:module') return statement;
    changed = true;
    const call = `${BUILTIN_REQUIRE}(${JSON.stringify(specifier)})`;
    const lines = [];
    for (const name of [defaultName, namespace]) if (name) lines.push(`const ${name} = ${call};`);
    const bindings = (named ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean)
      .map((b) => b.replace(/^([\w$]+)\s+as\s+([\w$]+)$/, '$1: $2'));
    if (bindings.length > 0) lines.push(`const { ${bindings.join(', ')} } = ${call};`);
    return lines.join(' ');
  });
  for (const match of out.matchAll(/^import\b[^;]*?["']([^"']+)["'];?[ \t]*$/gm)) {
    const specifier = match[1];
    if (specifier === 'node:module') continue;
    if (specifier.startsWith('node:') || builtinModules.includes(specifier)) {
      throw new Error(`${fileName}: an import of a built-in is left as an import: ${match[0]}`);
    }
  }
  if (!changed) return out;
  // After the shebang, if any; imports are hoisted, and the consts come before any code of the file.
  const shebang = /^#!.*\n/.exec(out)?.[0] ?? '';
  return `${shebang}${BUILTIN_REQUIRE_SHIM}${out.slice(shebang.length)}`;
}

/**
 * Fails when output files import each other in a cycle: a file's built-ins are bound when its own code
 * runs (see {@link requireBuiltins}), so no file may run code of another before that file's code has run.
 */
function assertNoChunkCycle(output) {
  const chunks = new Map(output.filter((c) => c.type === 'chunk').map((c) => [c.fileName, c]));
  const state = new Map();
  const visit = (name, path) => {
    state.set(name, 'open');
    for (const next of chunks.get(name)?.imports ?? []) {
      if (!chunks.has(next)) continue;
      if (state.get(next) === 'open') {
        throw new Error(`bundle: files import each other: ${[...path, name, next].join(' → ')}`);
      }
      if (!state.has(next)) visit(next, [...path, name]);
    }
    state.set(name, 'done');
  };
  for (const name of chunks.keys()) if (!state.has(name)) visit(name, []);
}

/** The package name of an import specifier (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isExternal(specifier) {
  return (
    specifier.startsWith('node:') ||
    builtinModules.includes(specifier) ||
    EXTERNAL.includes(packageOf(specifier))
  );
}

/** The `src/*.ts` entries of an app's `bin` map (`./dist/bin.js` → `src/bin.ts`), by output name. */
function binEntries(manifest, appDir) {
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  const entries = {};
  for (const bin of bins) {
    const match = /^(?:\.\/)?dist\/(.+)\.js$/.exec(bin);
    if (!match) throw new Error(`${manifest.name}: bin ${bin} is not a dist/*.js file`);
    entries[match[1]] = join(appDir, 'src', `${match[1]}.ts`);
  }
  return entries;
}

/** The packages the bundle imports at run time that the app does not declare in `dependencies`. */
function undeclaredExternals(manifest, output) {
  const imported = new Set();
  for (const chunk of output) {
    if (chunk.type !== 'chunk') continue;
    for (const specifier of [...chunk.imports, ...chunk.dynamicImports]) {
      if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith(CHUNK_PREFIX))
        continue;
      if (output.some((c) => c.fileName === specifier)) continue;
      imported.add(packageOf(specifier));
    }
  }
  return [...imported].filter((name) => !manifest.dependencies?.[name]);
}

/**
 * The modules a bin loads right after its entry (see `bundleBins`): those of the chunks the entries import
 * dynamically and of everything those chunks import statically, without what the entries hold themselves
 * (`conch --version` must not load the program).
 */
function startupModules(output) {
  const chunks = new Map(output.filter((c) => c.type === 'chunk').map((c) => [c.fileName, c]));
  const closure = (roots) => {
    const seen = new Set();
    const stack = [...roots];
    while (stack.length > 0) {
      const name = stack.pop();
      if (seen.has(name) || !chunks.has(name)) continue;
      seen.add(name);
      stack.push(...chunks.get(name).imports);
    }
    return seen;
  };
  const entries = [...chunks.values()].filter((c) => c.isEntry).map((c) => c.fileName);
  const atEntry = closure(entries);
  const lazy = [...chunks.values()].filter((c) => c.isEntry).flatMap((c) => c.dynamicImports);
  const modules = new Set();
  for (const name of closure(lazy)) {
    if (atEntry.has(name)) continue;
    for (const id of Object.keys(chunks.get(name).modules)) modules.add(id);
  }
  return modules;
}

/** Loads rolldown (a development dependency of the repository's root). */
async function loadRolldown(appDir) {
  const root = resolve(appDir, '../..');
  const path = createRequire(join(root, 'package.json')).resolve('rolldown');
  return import(pathToFileURL(path).href);
}

/**
 * Bundles the app in `appDir` (see the module doc). Resolves with the output: each file's name, size, and
 * the modules it holds.
 */
export async function bundleBins(appDir) {
  const dir = resolve(appDir);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const entries = binEntries(manifest, dir);
  const { rolldown } = await loadRolldown(dir);
  const outdir = join(dir, 'dist');
  const bundle = await rolldown({
    input: entries,
    cwd: dir,
    platform: 'node',
    external: isExternal,
    resolve: { conditionNames: ['conch-source', 'node', 'import', 'default'] },
    // The app's version, so that a bin reads no package.json to say it (apps/cli/src/version.ts).
    transform: { target: 'node20', define: { __CONCH_PACKAGE_VERSION__: JSON.stringify(manifest.version) } },
    // The bins export nothing; other chunks may import from an entry (the start-up group needs that).
    preserveEntrySignatures: 'allow-extension',
    logLevel: 'warn',
  });
  try {
    const options = {
      dir: outdir,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: `${CHUNK_PREFIX}[hash].js`,
      // Pure ASCII, without the JSDoc (the sources have it): V8 keeps a file's source in memory as one byte per
      // character then, not two (about 2 MB less for conch-mcp).
      charset: 'ascii',
      comments: { legal: true, annotation: true, jsdoc: false },
    };
    // Twice: the first split shows what a start loads right after the entry (the entry's dynamic imports and
    // what they import); the second puts all of that in one file, since every file is one more read,
    // compile and link before the command can run.
    const first = await bundle.generate(options);
    const main = startupModules(first.output);
    const { output } = await bundle.generate({
      ...options,
      codeSplitting: {
        groups: [{ name: 'main', test: (id) => main.has(id), includeDependenciesRecursively: false }],
      },
    });
    assertNoChunkCycle(output);
    const undeclared = undeclaredExternals(manifest, output);
    if (undeclared.length > 0) {
      throw new Error(
        `${manifest.name}: its bundle loads ${undeclared.join(', ')} at run time; declare ${undeclared.length > 1 ? 'them' : 'it'} in dependencies`,
      );
    }
    // Replace the previous bundle's lazy parts (their names change with their content).
    if (existsSync(outdir)) {
      for (const file of readdirSync(outdir)) {
        if (file.startsWith(CHUNK_PREFIX) && file.endsWith('.js')) rmSync(join(outdir, file));
      }
    }
    mkdirSync(outdir, { recursive: true });
    for (const file of output) {
      const text = file.type === 'chunk' ? requireBuiltins(file.code, file.fileName) : file.source;
      writeFileSync(join(outdir, file.fileName), text);
    }
    for (const name of Object.keys(entries)) chmodSync(join(outdir, `${name}.js`), 0o755);
    return output
      .filter((chunk) => chunk.type === 'chunk')
      .map((chunk) => ({
        fileName: chunk.fileName,
        bytes: Buffer.byteLength(chunk.code),
        isEntry: chunk.isEntry,
        imports: chunk.imports,
        modules: Object.fromEntries(
          Object.entries(chunk.modules).map(([id, info]) => [id, info.renderedLength]),
        ),
      }));
  } finally {
    await bundle.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bundleBins(process.cwd());
}
