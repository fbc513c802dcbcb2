#!/usr/bin/env node
// Makes a fresh clone runnable, only when needed. Everything it prints goes to stderr, so it can run in
// front of the stdio MCP server.
//
// Two scopes:
// - `server` (what `node scripts/conch-mcp.mjs` needs): installs only the MCP server's packages and their
//   dependencies (`pnpm install --filter`), quietly, and compiles them without type checking (the emitted
//   JavaScript is the same; CI type-checks).
// - `all` (what the tests need): the whole workspace, built by turbo with type checking.
// A marker in node_modules records which scope was installed, so a later `npm test` completes the install.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = ['-y', 'pnpm@10.34.9'];
/** The workspace package whose dependency closure the `server` scope installs and builds. */
const SERVER_PACKAGE = '@conch/mcp-server';
const MARKER = join(root, 'node_modules', '.conch-bootstrap.json');

function run(args, what, { quiet = false } = {}) {
  process.stderr.write(`[conch bootstrap] ${what}…\n`);
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  const r = spawnSync('npx', [...PNPM, ...args], {
    cwd: root,
    stdio: ['ignore', quiet ? 'pipe' : 2, quiet ? 'pipe' : 2],
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) {
    if (quiet) process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
    process.stderr.write(`[conch bootstrap] ${what} failed (exit ${r.status}).\n`);
    process.exit(r.status ?? 1);
  }
}

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(path) : st.mtimeMs);
  }
  return newest;
}

/** Workspace packages (dirs under packages/ and apps/) with a src/ folder. */
function workspacePackages() {
  const found = [];
  for (const group of ['packages', 'apps']) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) {
      const dir = join(base, name);
      if (existsSync(join(dir, 'src')) && existsSync(join(dir, 'package.json'))) found.push(dir);
    }
  }
  return found;
}

/** The directories of `name` and every workspace package it depends on (dependencies only). */
function dependencyClosure(name) {
  const byName = new Map();
  for (const dir of workspacePackages()) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    byName.set(pkg.name, { dir, deps: Object.keys(pkg.dependencies ?? {}) });
  }
  const dirs = new Set();
  const visit = (n) => {
    const entry = byName.get(n);
    if (!entry || dirs.has(entry.dir)) return;
    dirs.add(entry.dir);
    for (const dep of entry.deps) visit(dep);
  };
  visit(name);
  return [...dirs];
}

/** Packages (of `scope`) whose dist is missing or older than their src. */
function staleBuilds(scope) {
  const dirs = scope === 'server' ? dependencyClosure(SERVER_PACKAGE) : workspacePackages();
  return dirs.filter((dir) => {
    const dist = join(dir, 'dist');
    return !existsSync(dist) || newestMtime(join(dir, 'src')) > newestMtime(dist);
  });
}

function readMarker() {
  try {
    return JSON.parse(readFileSync(MARKER, 'utf8'));
  } catch {
    return undefined;
  }
}

function writeMarker(marker) {
  writeFileSync(MARKER, JSON.stringify(marker));
}

function installedScope() {
  if (!existsSync(join(root, 'node_modules', '.modules.yaml'))) return undefined;
  const marker = readMarker();
  if (marker === undefined) return 'all'; // installed by hand or by CI: the whole workspace
  return marker.lockMtime === statSync(join(root, 'pnpm-lock.yaml')).mtimeMs ? marker.scope : undefined;
}

/** Makes every `bin` of a workspace package executable (tsc does not keep modes). */
function chmodBins() {
  for (const dir of workspacePackages()) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const bins = typeof pkg.bin === 'string' ? [pkg.bin] : Object.values(pkg.bin ?? {});
    for (const bin of bins) if (existsSync(join(dir, bin))) chmodSync(join(dir, bin), 0o755);
  }
}

/**
 * Installs and builds what `scope` needs (see the module doc). `server` is satisfied by an `all` install;
 * `all` after a `server` install completes it.
 */
export async function bootstrap(scope = 'all') {
  const have = installedScope();
  if (have === undefined || (scope === 'all' && have === 'server')) {
    if (scope === 'server') {
      run(
        ['install', '--frozen-lockfile', '--filter', `${SERVER_PACKAGE}...`, '--reporter=silent'],
        'installing the server’s dependencies',
        { quiet: true },
      );
    } else {
      run(['install', '--frozen-lockfile'], 'installing dependencies');
    }
    writeMarker({ ...readMarker(), scope, lockMtime: statSync(join(root, 'pnpm-lock.yaml')).mtimeMs });
  }
  const marker = readMarker();
  const fastBuilt = marker?.build === 'fast';
  if (scope === 'server') {
    const stale = staleBuilds(scope);
    if (stale.length === 0) return;
    process.stderr.write('[conch bootstrap] building the server…\n');
    await transpile(stale);
    chmodBins();
    writeMarker({ ...readMarker(), build: 'fast' });
  } else if (fastBuilt || staleBuilds(scope).length > 0) {
    run(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], 'building');
    writeMarker({ ...readMarker(), build: 'full' });
  }
}

/**
 * Compiles each package's src/ to dist/ file by file with TypeScript's `transpileModule` (the packages
 * use `isolatedModules`, so this emits what tsc would): no type check and no declarations, which is
 * all the server needs to run. A later full build (`npm test`, CI) replaces it.
 */
async function transpile(dirs) {
  const { default: ts } = await import(join(root, 'node_modules', 'typescript', 'lib', 'typescript.js'));
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    );
  for (const dir of dirs) {
    for (const file of walk(join(dir, 'src'))) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('.d.ts')) continue;
      const out = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: {
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.ESNext, // every package is "type": "module"
          verbatimModuleSyntax: true,
        },
      });
      const target = join(dir, 'dist', file.slice(join(dir, 'src').length + 1)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, out.outputText);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await bootstrap(process.argv[2] ?? 'all');
