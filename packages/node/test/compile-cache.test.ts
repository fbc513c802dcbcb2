// The compile cache of the bins' chunks on Node 20 (src/compile-cache.ts), run in real child processes
// against the built module: a first run writes an entry per chunk, the next compiles from it, a damaged entry
// is compiled afresh and written again; a running process writes after a few seconds; errors keep their
// lines; files that are not the bin's chunks, chunks with `import(`, and NODE_DISABLE_COMPILE_CACHE are left
// to Node. (On Node 22.1+, Node's own cache is used instead: the tests say so and check that.)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Module } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { waitFor } from '@conch/core/testing';
import { afterEach, describe, expect, it } from 'vitest';

const BUILT = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/compile-cache.js');
const NODE_CACHE = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A bin in a fresh directory: `bin.mjs` turns the cache on, then runs `main` (which may require chunks). */
function fixture(chunks: Record<string, string>, main: string) {
  const dir = mkdtempSync(join(tmpdir(), 'conch-compile-cache-test-'));
  dirs.push(dir);
  const app = join(dir, 'app');
  mkdirSync(app);
  for (const [name, code] of Object.entries(chunks)) writeFileSync(join(app, name), code);
  writeFileSync(
    join(app, 'bin.mjs'),
    [
      `import { createRequire } from 'node:module';`,
      `import { compileCacheStats, enableCompileCache } from ${JSON.stringify(pathToFileURL(BUILT).href)};`,
      `const require = createRequire(import.meta.url);`,
      `enableCompileCache(import.meta.url);`,
      `process.on('exit', () => process.stderr.write('STATS ' + JSON.stringify(compileCacheStats()) + '\\n'));`,
      main,
    ].join('\n'),
  );
  const cache = join(dir, 'cache');
  const env = { ...process.env, XDG_CACHE_HOME: cache, NODE_DISABLE_COMPILE_CACHE: '' };
  const run = (extra: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(process.execPath, [join(app, 'bin.mjs')], {
      env: { ...env, ...extra },
      encoding: 'utf8',
    });
    const stats = JSON.parse(/STATS (.*)/.exec(r.stderr)?.[1] ?? 'null');
    return { ...r, stats };
  };
  /** The entries of the chunk cache, by name. */
  const entries = () => {
    const root = join(cache, 'conch', 'compile-cache');
    if (!existsSync(root)) return [];
    return readdirSync(root)
      .filter((d) => d.startsWith('chunks-'))
      .flatMap((d) => readdirSync(join(root, d)).map((name) => join(root, d, name)));
  };
  return { app, cache, env, run, entries };
}

describe.skipIf(NODE_CACHE)('the chunk cache (Node 20)', () => {
  it('writes an entry on the first run, compiles from it on the next, and rewrites a damaged one', () => {
    const f = fixture(
      { 'chunk-a1.cjs': 'exports.twice = (n) => n * 2;\n' },
      `console.log(require('./chunk-a1.cjs').twice(21));`,
    );
    const first = f.run();
    expect(first.stdout).toBe('42\n');
    expect(first.stats).toEqual({ mode: 'chunks', hits: 0, misses: 1, written: 1 });
    const [entry] = f.entries();
    expect(entry).toMatch(/chunk-a1\.cjs\.\d+$/);
    expect(statSync(entry as string).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(entry as string)).mode & 0o777).toBe(0o700);

    const second = f.run();
    expect(second.stdout).toBe('42\n');
    expect(second.stats).toEqual({ mode: 'chunks', hits: 1, misses: 0, written: 0 });

    writeFileSync(entry as string, 'garbage');
    const third = f.run();
    expect(third.stdout).toBe('42\n');
    expect(third.stats).toEqual({ mode: 'chunks', hits: 0, misses: 1, written: 1 });
    expect(f.run().stats.hits).toBe(1);
  });

  it('keeps the file and line of an error thrown in a cached chunk', () => {
    const f = fixture(
      { 'chunk-err.cjs': '"use strict";\nexports.fail = () => {\n  throw new Error("boom");\n};\n' },
      `try { require('./chunk-err.cjs').fail(); } catch (e) { console.log(e.stack.split('\\n')[1]); }`,
    );
    for (const run of [f.run(), f.run()]) expect(run.stdout).toMatch(/chunk-err\.cjs:3:\d+\)?\n$/);
  });

  it('leaves to Node other files, chunks elsewhere, and chunks with import()', () => {
    const f = fixture(
      {
        'helper.cjs': 'exports.x = 1;\n',
        'chunk-dyn.cjs': 'exports.load = () => import("node:os");\n',
      },
      [
        `import { writeFileSync, mkdirSync } from 'node:fs';`,
        `mkdirSync(new URL('./sub/', import.meta.url), { recursive: true });`,
        `writeFileSync(new URL('./sub/chunk-b2.cjs', import.meta.url), 'exports.y = 2;');`,
        `const { x } = require('./helper.cjs'); const { y } = require('./sub/chunk-b2.cjs');`,
        `const os = await require('./chunk-dyn.cjs').load();`,
        `console.log(x + y, typeof os.homedir);`,
      ].join('\n'),
    );
    const run = f.run();
    expect(run.stdout).toBe('3 function\n');
    expect(run.stats).toEqual({ mode: 'chunks', hits: 0, misses: 0, written: 0 });
    expect(f.entries()).toEqual([]);
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE', () => {
    const f = fixture({ 'chunk-c3.cjs': 'exports.z = 3;\n' }, `console.log(require('./chunk-c3.cjs').z);`);
    const run = f.run({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(run.stdout).toBe('3\n');
    expect(run.stats.mode).toBe('off');
    expect(f.entries()).toEqual([]);
  });

  it('a process that keeps running writes its entries after a few seconds', async () => {
    const f = fixture(
      { 'chunk-d4.cjs': 'exports.w = 4;\n' },
      `console.log(require('./chunk-d4.cjs').w); setInterval(() => {}, 1000);`,
    );
    const child = spawn(process.execPath, [join(f.app, 'bin.mjs')], { env: f.env, stdio: 'ignore' });
    try {
      expect(await waitFor(() => f.entries().length === 1, { timeoutMs: 15_000 })).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('runs on without a cache when its directory cannot be made', () => {
    const f = fixture({ 'chunk-e5.cjs': 'exports.v = 5;\n' }, `console.log(require('./chunk-e5.cjs').v);`);
    // A file where the cache's directory would go.
    writeFileSync(f.cache, 'not a directory');
    const run = f.run();
    expect(run.stdout).toBe('5\n');
    expect(run.stats).toEqual({ mode: 'chunks', hits: 0, misses: 1, written: 0 });
  });
});

describe.skipIf(!NODE_CACHE)("Node's own compile cache (Node 22.1+)", () => {
  it('is used instead of the chunk cache', () => {
    const f = fixture(
      { 'chunk-a1.cjs': 'exports.one = 1;\n' },
      `console.log(require('./chunk-a1.cjs').one);`,
    );
    expect(f.run().stats.mode).toBe('node');
  });
});
