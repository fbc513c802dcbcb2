#!/usr/bin/env node
// Makes a fresh clone runnable, only when needed. Everything it prints goes to stderr, so it can run in
// front of the stdio MCP server.
//
// Scopes:
// - `server`, `cli`, `bridge` (what `node scripts/conch-mcp.mjs`, `conch.mjs` and `conch-opencode.mjs`
//   need): installs only that app's packages and their dependencies (`pnpm install --filter APP...`), then
//   bundles the app's bin from the sources (scripts/bundle-bins.mjs, about a second): no type check, no
//   library builds.
// - `all` (what the tests need): the whole workspace, built by turbo with type checking.
// A marker in node_modules records what was installed, so a later scope completes the install.
//
// The install copes with a changed environment: another HOME (an MCP client's own environment) keeps using
// the package store node_modules was installed from, and pnpm never stops to ask on a missing terminal
// (`confirmModulesPurge=false`). When it fails, the cause is printed in a few lines with what to do
// (see `explainFailure`).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The pnpm the repository pins (package.json `packageManager`), run through npx. */
export const PNPM = ['-y', 'pnpm@10.34.9'];
/** The app whose dependency closure each quick scope installs and bundles. */
export const SCOPES = {
  server: { app: 'apps/mcp-server', what: 'the server' },
  cli: { app: 'apps/cli', what: 'the CLI' },
  bridge: { app: 'apps/opencode-bridge', what: 'the OpenCode bridge' },
};
const MARKER = join(root, 'node_modules', '.conch-bootstrap.json');
/** Lines of a failed tool's output shown with the explanation. */
const TAIL_LINES = 12;

function log(message) {
  process.stderr.write(`[conch bootstrap] ${message}\n`);
}

/** The registry a failed request went to, from npm's or pnpm's message (`request to URL failed`, `GET URL`). */
function registryIn(output) {
  const url = /request to (\S+?) failed|\bGET (\S+?):? /.exec(output);
  try {
    return url ? new URL(url[1] ?? url[2]).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What went wrong in a failed install or build, from its output: the cause in a sentence and what to do.
 * Falls back to the command to run by hand (its full output shows everything).
 */
export function explainFailure(output, command) {
  const registry = registryIn(output) ?? 'the npm registry';
  const rules = [
    [
      /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|ERR_SOCKET_TIMEOUT|ERR_PNPM_META_FETCH_FAIL|socket hang up|network/i,
      `the package registry could not be reached (${registry}).`,
      'Check the network and any proxy (npm config get proxy; npm config get https-proxy) and the registry (npm config get registry, npm_config_registry), then run the same command again.',
    ],
    [
      /ERR_PNPM_ABORTED_REMOVE_MODULES_DIR/,
      'pnpm wanted to reinstall node_modules (installed with another package store or settings) and had no terminal to ask.',
      `Remove the installed dependencies and start again: rm -rf ${join(root, 'node_modules')} ${join(root, '*', '*', 'node_modules')}`,
    ],
    [
      /ERR_PNPM_OUTDATED_LOCKFILE|ERR_PNPM_LOCKFILE_CONFIG_MISMATCH|frozen-lockfile/i,
      'pnpm-lock.yaml does not match the package.json files.',
      `Update the lock file: cd ${root} && npx ${PNPM.join(' ')} install`,
    ],
    [
      /EACCES|EPERM|permission denied/i,
      'a file or directory could not be written (permissions).',
      `Make ${root} and your package store writable by this user (or run as its owner).`,
    ],
    [
      /ENOSPC|no space left/i,
      'the disk is full.',
      'Free some space (the package store is under ~/.local/share/pnpm by default) and run again.',
    ],
    [
      /gyp ERR!|node-gyp/,
      'a native module tried to compile (node-gyp) and failed.',
      'conch needs no compiler; a dependency that compiles is a bug: please report it with the output above.',
    ],
  ];
  for (const [pattern, cause, fix] of rules) {
    if (pattern.test(output)) return { cause, fix };
  }
  return {
    cause: 'see the output above.',
    fix: `Run it by hand to see everything: cd ${root} && ${command}`,
  };
}

/**
 * The lines of a tool's output worth showing: the error headlines of npm and pnpm (`npm error code …`,
 * `npm error request to … failed`, ` ERR_PNPM_…`, `Error: …`) when there are any, else its last lines.
 */
export function relevantLines(text, n = TAIL_LINES) {
  const lines = text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '');
  const headline =
    /(npm (error|ERR!) (code|errno|request|network|syscall|\d{3})\b)|ERR_PNPM_|^\s*(\w*Error|error):|gyp ERR! (stack )?Error|reason:/;
  const headlines = lines.filter((line) => headline.test(line));
  return (headlines.length > 0 ? headlines : lines).slice(-n);
}

/**
 * Runs `npx pnpm ARGS` with its output captured (stdout stays free for the MCP channel). On failure prints
 * the end of that output, the cause and the fix, and exits with its status.
 */
function pnpm(args, what) {
  const started = Date.now();
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  const r = spawnSync('npx', [...PNPM, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status === 0) return Math.round((Date.now() - started) / 1000);
  const output = `${r.stdout ?? ''}\n${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}`;
  const command = `npx ${[...PNPM, ...args].join(' ')}`;
  const { cause, fix } = explainFailure(output, command);
  for (const line of relevantLines(output)) process.stderr.write(`  | ${line}\n`);
  log(`${what} failed (exit ${r.status ?? r.signal ?? r.error?.message}): ${cause}`);
  log(`fix: ${fix}`);
  process.exit(typeof r.status === 'number' && r.status !== 0 ? r.status : 1);
}

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
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

/** The directories of the workspace package in `appDir` and every workspace package it depends on. */
function dependencyClosure(appDir) {
  const byName = new Map();
  let start;
  for (const dir of workspacePackages()) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    byName.set(pkg.name, { dir, deps: Object.keys(pkg.dependencies ?? {}) });
    if (dir === join(root, appDir)) start = pkg.name;
  }
  const dirs = new Set();
  const visit = (n) => {
    const entry = byName.get(n);
    if (!entry || dirs.has(entry.dir)) return;
    dirs.add(entry.dir);
    for (const dep of entry.deps) visit(dep);
  };
  visit(start);
  return [...dirs];
}

/** The package name of the workspace package in `dir` (relative to the repository). */
function packageName(dir) {
  return JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).name;
}

/** Whether the bundle of `appDir` is missing or older than a source it is made of. */
function bundleStale(appDir) {
  const bundle = join(root, appDir, 'dist', 'bin.cjs');
  if (!existsSync(bundle)) return true;
  const built = statSync(bundle).mtimeMs;
  const inputs = [
    ...dependencyClosure(appDir).map((dir) => join(dir, 'src')),
    join(root, 'scripts', 'bundle-bins.mjs'),
    join(root, 'pnpm-lock.yaml'),
  ];
  return inputs.some((input) => newestMtime(input) > built);
}

/** Packages whose dist is missing or older than their src (for the full build). */
function staleLibraries() {
  return workspacePackages().filter((dir) => newestMtime(join(dir, 'src')) > newestMtime(join(dir, 'dist')));
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

/** The scopes installed for the current lock file: `['all']`, some quick scopes, or none. */
function installedScopes() {
  if (!existsSync(join(root, 'node_modules', '.modules.yaml'))) return [];
  const marker = readMarker();
  if (marker === undefined) return ['all']; // installed by hand or by CI: the whole workspace
  if (marker.lockMtime !== statSync(join(root, 'pnpm-lock.yaml')).mtimeMs) return [];
  return marker.scopes ?? (marker.scope ? [marker.scope] : []);
}

/**
 * The package store node_modules was installed from, when it still exists: a later install from another
 * HOME uses it too instead of asking to reinstall everything into that HOME's store.
 */
function installedStoreDir() {
  try {
    const text = readFileSync(join(root, 'node_modules', '.modules.yaml'), 'utf8');
    // pnpm writes this file as JSON (which is YAML too); older versions wrote plain YAML.
    const dir = text.trimStart().startsWith('{')
      ? JSON.parse(text).storeDir
      : /^storeDir:\s*(.+)$/m
          .exec(text)?.[1]
          ?.trim()
          .replace(/^['"]|['"]$/g, '');
    return typeof dir === 'string' && existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The flags every install gets (see the module doc). */
function installFlags() {
  const store = installedStoreDir();
  return [
    '--frozen-lockfile',
    '--reporter=append-only',
    '--config.confirmModulesPurge=false',
    ...(store ? ['--store-dir', store] : []),
  ];
}

/**
 * Installs and builds what `scope` needs (see the module doc). A quick scope is satisfied by an `all`
 * install; `all` after quick ones completes the install.
 */
export async function bootstrap(scope = 'all') {
  if (scope !== 'all' && !SCOPES[scope]) throw new Error(`unknown bootstrap scope ${scope}`);
  const have = installedScopes();
  if (!have.includes('all') && !have.includes(scope)) {
    const lockMtime = statSync(join(root, 'pnpm-lock.yaml')).mtimeMs;
    if (scope === 'all') {
      log('installing all dependencies (first run only)…');
      const seconds = pnpm(['install', ...installFlags()], 'installing the dependencies');
      log(`installed in ${seconds} s`);
      writeMarker({ ...readMarker(), scopes: ['all'], lockMtime });
    } else {
      // The scopes installed before are installed again with this one: should pnpm have to reinstall
      // node_modules from scratch (another package store), they keep working.
      const scopes = [...new Set([...have, scope])];
      const filters = scopes.flatMap((s) => ['--filter', `${packageName(SCOPES[s].app)}...`]);
      const { what } = SCOPES[scope];
      log(`installing ${what}'s dependencies (first run only)…`);
      const seconds = pnpm(['install', ...installFlags(), ...filters], `installing ${what}'s dependencies`);
      log(`installed in ${seconds} s`);
      writeMarker({ ...readMarker(), scopes, lockMtime });
    }
  }
  if (scope === 'all') {
    const build = readMarker()?.build;
    if (build === 'quick' || build === 'fast' || staleLibraries().length > 0) {
      log('building…');
      pnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], 'building');
      writeMarker({ ...readMarker(), build: 'full' });
    }
    return;
  }
  const { app, what } = SCOPES[scope];
  if (!bundleStale(app)) return;
  log(`building ${what}…`);
  try {
    const { bundleBins } = await import(pathToFileURL(join(root, 'scripts', 'bundle-bins.mjs')).href);
    await bundleBins(join(root, app));
  } catch (error) {
    log(`building ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    log(
      `fix: run the full build to see every error: cd ${root} && npx ${PNPM.join(' ')} exec turbo run build`,
    );
    process.exit(1);
  }
  // The libraries' dist/ (tsc's, with types) is not built: a later `all` builds everything.
  writeMarker({ ...readMarker(), build: 'quick' });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bootstrap(process.argv[2] ?? 'all');
