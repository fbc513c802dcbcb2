/**
 * V8's compiled code of conch's modules kept between runs, so that a command or a server starts without
 * compiling its code again. The cache lives in a private directory (mode 0700) under the user's cache
 * directory, not in the shared temp directory Node would pick.
 *
 * - Node 22.1 and newer: Node's own cache (`module.enableCompileCache`).
 * - Older Node (20): the same idea for the bins' CommonJS chunks (`chunk-*.cjs` next to the bin), which Node
 *   20 cannot cache itself: each chunk is compiled with `vm.Script` from its cached data when there is any,
 *   and the cached data is written after the code has run (so it holds the functions the start compiled
 *   lazily too), at exit or a few seconds after the start, whichever comes first. V8 checks cached data
 *   against the source and its own version and flags, and compiles afresh when it does not fit; a chunk's
 *   name holds a hash of its content, so a new build never meets an old chunk's entry.
 *
 * `NODE_DISABLE_COMPILE_CACHE=1` turns both off, as it does Node's.
 */

import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { Module } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** Where the compile cache lives: `$XDG_CACHE_HOME/conch/compile-cache`, else `~/.cache/conch/compile-cache`. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'conch', 'compile-cache');
}

/** The chunks the Node 20 cache covers: a bin's lazily loaded CommonJS parts (scripts/bundle-bins.mjs). */
const CHUNK_FILE = /^chunk-[\w-]+\.cjs$/;

/** A dynamic `import(…)` call (or a comment that looks like one, which only costs the cache). */
const DYNAMIC_IMPORT = /(?:^|[^.\w$"'`])import\(/m;

/** How long after the start a long-running bin (a server, the daemon) writes what it compiled so far. */
const WRITE_AFTER_MS = 3000;

/** At most this many entries stay in the Node 20 cache's directory (old builds' chunks go first). */
const MAX_ENTRIES = 200;

/** What the compile cache did in this process (for tests and diagnosis). */
export interface CompileCacheStats {
  /** `'node'` (Node's own cache), `'chunks'` (the Node 20 cache of the bin's chunks) or `'off'`. */
  readonly mode: 'node' | 'chunks' | 'off';
  /** Chunks compiled from cached data. */
  readonly hits: number;
  /** Chunks compiled afresh: no entry, or V8 rejected it. */
  readonly misses: number;
  /** Entries written. */
  readonly written: number;
}

const stats: { -readonly [K in keyof CompileCacheStats]: CompileCacheStats[K] } = {
  mode: 'off',
  hits: 0,
  misses: 0,
  written: 0,
};

/** What the compile cache did in this process so far. */
export function compileCacheStats(): CompileCacheStats {
  return { ...stats };
}

/**
 * Turns the compile cache on for the modules loaded from now on (call it before the bin loads its main
 * chunk). `binUrl` is the bin's own `import.meta.url`: on Node 20 only the chunks in its directory are
 * cached. Never throws: without a usable directory the bin simply compiles as usual.
 */
export function enableCompileCache(binUrl: string): void {
  if (stats.mode !== 'off' || process.env.NODE_DISABLE_COMPILE_CACHE) return;
  try {
    const enable = (Module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
    if (typeof enable === 'function') {
      const dir = compileCacheDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      enable(dir);
      stats.mode = 'node';
      return;
    }
    cacheChunks(dirname(fileURLToPath(binUrl)));
  } catch {
    // No cache: the code is compiled as usual.
  }
}

interface CompilingModule {
  exports: unknown;
  _compile(content: string, filename: string, ...rest: unknown[]): unknown;
}

/** The Node 20 cache: compiles the chunks in `binDir` through `vm.Script` with cached data (module doc). */
function cacheChunks(binDir: string): void {
  // One directory per V8 build and architecture: another Node's data would only be rejected.
  const dir = join(compileCacheDir(), `chunks-v8-${process.versions.v8}-${process.arch}`);
  const prototype = (Module as unknown as { prototype: CompilingModule }).prototype;
  const compile = prototype._compile;
  const pending = new Map<string, Script>();
  prototype._compile = function (
    this: CompilingModule,
    content: string,
    filename: string,
    ...rest: unknown[]
  ) {
    const name = basename(filename);
    // A script made here has no loader for `import()` (Node's for a vm.Script is experimental and warns), so
    // a chunk that has one (the bundles turn theirs into require) is left to Node.
    if (
      dirname(filename) !== binDir ||
      !CHUNK_FILE.test(name) ||
      (content.includes('import(') && DYNAMIC_IMPORT.test(content))
    ) {
      return compile.call(this, content, filename, ...rest);
    }
    // The entry's name says its content; its length guards against a file changed in place.
    const entry = join(dir, `${name}.${Buffer.byteLength(content)}`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(entry);
    } catch {
      cachedData = undefined;
    }
    // The wrapper Node's CommonJS loader puts around a module, on the source's first line (so lines match).
    const script = new Script(
      `(function (exports, require, module, __filename, __dirname) { ${content}\n})`,
      { filename, cachedData },
    );
    if (cachedData === undefined || script.cachedDataRejected) {
      stats.misses += 1;
      pending.set(entry, script);
    } else {
      stats.hits += 1;
    }
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    const require = Module.createRequire(filename);
    return wrapper.call(this.exports, this.exports, require, this, filename, binDir);
  };
  stats.mode = 'chunks';
  const write = () => {
    if (pending.size === 0) return;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const [entry, script] of pending) {
        // Whole or not at all: another process may read the entry at any moment.
        const partial = `${entry}.${process.pid}.tmp`;
        try {
          writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
          renameSync(partial, entry);
        } catch (error) {
          rmSync(partial, { force: true });
          throw error;
        }
        stats.written += 1;
      }
      pending.clear();
      pruneEntries(dir);
    } catch {
      // A read-only or full disk: the next start compiles again.
    }
  };
  process.once('exit', write);
  setTimeout(write, WRITE_AFTER_MS).unref();
}

/** Keeps the newest {@link MAX_ENTRIES} entries of `dir` (an entry removed too early is only written again). */
function pruneEntries(dir: string): void {
  const names = readdirSync(dir);
  if (names.length <= MAX_ENTRIES) return;
  const byAge = names
    .map((name) => ({ name, mtime: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => a.mtime - b.mtime);
  for (const { name } of byAge.slice(0, names.length - MAX_ENTRIES)) unlinkSync(join(dir, name));
}
