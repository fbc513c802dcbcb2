#!/usr/bin/env node
/**
 * Bundles the `bin` entries of one app (apps/cli, apps/mcp-server, apps/opencode-bridge) with rolldown, so
 * that a command starts without resolving and compiling hundreds of module files:
 *
 * - the bundles are CommonJS (`dist/bin.cjs`, the package's `bin`, and `dist/chunk-*.cjs`): Node loads a
 *   CommonJS file with less machinery than an ES module, and on Node 20, which has no compile cache of its
 *   own, `@conch/node`'s `enableCompileCache` can keep V8's compiled code of CommonJS chunks between runs
 *   (it cannot for ES modules). `dist/bin.js` stays as a two-line ES module that runs `bin.cjs`, for
 *   configurations that name the old path;
 * - the entry holds what every start needs (`conch --version` nothing more); what the entry loads right
 *   after with `import(…)` is one file (the main chunk), and what a command loads only when it runs (the
 *   daemon, `conch attach`, ssh2, the OpenCode SDK, the screen emulator) stays in files of its own, next to
 *   the entry so that `import.meta.url` (`__filename` in CommonJS) means the same in each;
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
 * Fails when output files require each other in a cycle: a CommonJS file required while it is still running
 * hands over its exports half made.
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

/**
 * The text of `dist/<name>.js`: the bin's old path, kept for configurations that name it (an MCP client's
 * `args`), which runs the CommonJS bin. An ES module, as the package's `.js` files are.
 */
export function esmDoor(name) {
  return `#!/usr/bin/env node\n// The ES-module path of this bin, kept for configurations that name it: it runs ./${name}.cjs.\nimport './${name}.cjs';\n`;
}

/**
 * An entry's code without the bare `require("./chunk-….cjs");` of a chunk that the entry also loads lazily.
 * The bundler puts its helpers in the main chunk at times and then requires that chunk at the entry's top,
 * binding nothing; the entry would then load the main chunk before it runs at all, which costs
 * `conch --version` the whole program and leaves the main chunk out of the compile cache (turned on by the
 * entry's code). The lazy `require` loads it anyway, right after the entry's code has run.
 */
export function deferLazyRequires(chunk) {
  const bare = new Set(chunk.dynamicImports.map((lazy) => `require(${JSON.stringify(`./${lazy}`)});`));
  return chunk.code
    .split('\n')
    .filter((line) => !bare.has(line))
    .join('\n');
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

/** The `src/*.ts` entries of an app's `bin` map (`./dist/bin.cjs` → `src/bin.ts`), by output name. */
function binEntries(manifest, appDir) {
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
  const entries = {};
  for (const bin of bins) {
    const match = /^(?:\.\/)?dist\/(.+)\.cjs$/.exec(bin);
    if (!match) throw new Error(`${manifest.name}: bin ${bin} is not a dist/*.cjs file`);
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
      format: 'cjs',
      entryFileNames: '[name].cjs',
      chunkFileNames: `${CHUNK_PREFIX}[hash].cjs`,
      // `import('node:readline')` as require: the compile cache's scripts have no loader for import().
      dynamicImportInCjs: false,
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
        if (file.startsWith(CHUNK_PREFIX) && /\.c?js$/.test(file)) rmSync(join(outdir, file));
      }
    }
    mkdirSync(outdir, { recursive: true });
    for (const file of output) {
      const text = file.type !== 'chunk' ? file.source : file.isEntry ? deferLazyRequires(file) : file.code;
      writeFileSync(join(outdir, file.fileName), text);
    }
    for (const name of Object.keys(entries)) {
      chmodSync(join(outdir, `${name}.cjs`), 0o755);
      writeFileSync(join(outdir, `${name}.js`), esmDoor(name));
      chmodSync(join(outdir, `${name}.js`), 0o755);
    }
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
