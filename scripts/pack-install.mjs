#!/usr/bin/env node
/**
 * The install check a user's `npm install` would do: packs every publishable workspace package (not
 * `"private": true`) with `pnpm pack`, then, for each app, installs its tarball and those of the workspace
 * packages it depends on into an empty directory with npm, prints the installed size, and runs the installed
 * binaries there:
 *
 * - `@conch/cli`: `conch --version`, and `conch exec -- 'echo hi'` (with a private CONCH_HOME, daemon stopped
 *   afterwards) must print `hi`; at most {@link MAX_INSTALL_MB} MB, and no OpenCode installed;
 * - `@conch/mcp-server`: `conch-mcp` must answer `initialize` and `tools/list` over stdio (without
 *   `delegate_task` when no `opencode` is on PATH) and run `execute`; at most {@link MAX_INSTALL_MB} MB, and no
 *   OpenCode installed;
 * - `@conch/opencode-bridge`: `conch-opencode` must list `delegate_task` (it brings OpenCode; size shown).
 *
 * It also checks each packed package.json against the publishing rules (scripts/package-rules.mjs), no
 * `workspace:` range, every `exports` target and `bin` present (a bin executable, with a node shebang).
 *
 * Run after a build: `node scripts/pack-install.mjs` (CI: `.ci/run`). Prints one line per check and exits 1
 * on the first failure. Every step has a time bound.
 */

import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { mcpExchange, resultText } from './mcp-exchange.mjs';
import { publishablePackages, publishProblems } from './package-rules.mjs';

const PNPM = ['-y', 'pnpm@10.34.9'];
const INSTALL_TIMEOUT_MS = 5 * 60_000;
const RUN_TIMEOUT_MS = 60_000;
/** The installed size each of conch's own installs (CLI, server) must stay under, in MB (10^6 bytes). */
const MAX_INSTALL_MB = 80;
/** The installs: the app, the binaries it must provide, and whether it may bring OpenCode. */
const INSTALLS = [
  { name: '@conch/cli', bins: ['conch'], maxMb: MAX_INSTALL_MB },
  { name: '@conch/mcp-server', bins: ['conch-mcp'], maxMb: MAX_INSTALL_MB },
  { name: '@conch/opencode-bridge', bins: ['conch-opencode'], opencode: true },
];

const work = mkdtempSync(join(tmpdir(), 'conch-pack-'));
let failed = false;
/** Stops what the check started (the installed conch's daemon), also when a check fails. */
let stopStarted = () => {};

function fail(message) {
  console.error(`pack-install: FAIL ${message}`);
  failed = true;
  cleanup();
  process.exit(1);
}

function ok(message) {
  console.log(`pack-install: ok   ${message}`);
}

function cleanup() {
  stopStarted();
  stopStarted = () => {};
  rmSync(work, { recursive: true, force: true });
}

/** Runs a command to completion (bounded); fails the check when it does not exit 0. */
function run(what, command, args, options = {}) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    timeout: options.timeout ?? RUN_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    ...options,
  });
  if (result.error) fail(`${what}: ${result.error.message}`);
  if (result.status !== 0) {
    fail(`${what} exited ${result.status ?? result.signal}:\n${result.stdout ?? ''}${result.stderr ?? ''}`);
  }
  return result;
}

/** Every file path an `exports` value points at (conditions other than conch's source condition). */
function exportTargets(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') {
    for (const [condition, target] of Object.entries(value)) {
      if (condition !== 'conch-source') exportTargets(target, out);
    }
  }
  return out;
}

/** Checks one packed package (unpacked under `dir`) against the rules of a publishable package. */
function checkManifest(packed, dir) {
  const name = packed.name;
  if (JSON.stringify(packed).includes('workspace:'))
    fail(`${name}: the packed package.json still has a workspace: range`);
  const problems = publishProblems(packed, dir, { source: false });
  if (problems.length > 0) fail(`${name}: the packed package needs ${problems.join(', ')}`);
  if (!packed.exports) fail(`${name}: no "exports"`);
  for (const target of exportTargets(packed.exports)) {
    if (!existsSync(join(dir, target))) fail(`${name}: exports target ${target} is not in the tarball`);
  }
  for (const [bin, target] of Object.entries(packed.bin ?? {})) {
    const file = join(dir, target);
    if (!existsSync(file)) fail(`${name}: bin ${bin} → ${target} is not in the tarball`);
    if ((statSync(file).mode & 0o111) === 0) fail(`${name}: bin ${bin} (${target}) is not executable`);
    if (!readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node'))
      fail(`${name}: bin ${bin} has no node shebang`);
  }
}

/** The workspace packages `name` depends on at run time, itself included (by package name). */
function closure(name, manifests) {
  const found = new Set();
  const visit = (n) => {
    const manifest = manifests.get(n);
    if (!manifest || found.has(n)) return;
    found.add(n);
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep);
  };
  visit(name);
  return [...found];
}

/** Bytes of the files under `dir` (symbolic links counted as themselves). */
function sizeOf(dir) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += sizeOf(path);
    else bytes += lstatSync(path).size;
  }
  return bytes;
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);

/** PATH without the directories that hold an `opencode` binary (a user without OpenCode). */
function pathWithoutOpencode() {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && !existsSync(join(dir, 'opencode')))
    .join(delimiter);
}

/** The biggest directories under node_modules, for a report when an install is too big. */
function biggest(nodeModules, n = 8) {
  const sizes = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '.bin') continue;
    const dirs = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((sub) => `${entry.name}/${sub}`)
      : [entry.name];
    for (const dir of dirs) sizes.push([dir, sizeOf(join(nodeModules, dir))]);
  }
  return sizes
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([dir, bytes]) => `${dir} ${mb(bytes)} MB`)
    .join(', ');
}

/** Runs the installed binaries of one install (see the module doc). */
async function checkBins(install, app) {
  const bin = (name) => join(app, 'node_modules', '.bin', name);
  for (const name of install.bins) if (!existsSync(bin(name))) fail(`no ${name} binary after the install`);
  const env = { ...process.env, NO_COLOR: '1', PATH: pathWithoutOpencode() };
  if (install.name === '@conch/cli') {
    const version = run('conch --version', bin('conch'), ['--version'], { cwd: app, env });
    ok(`conch --version printed ${version.stdout.trim()}`);
    const home = join(app, 'conch-home');
    const daemonEnv = { ...env, CONCH_HOME: home };
    stopStarted = () =>
      spawnSync(bin('conch'), ['daemon', 'stop'], { cwd: app, env: daemonEnv, timeout: RUN_TIMEOUT_MS });
    const exec = run('conch exec', bin('conch'), ['exec', '--', 'echo hi'], { cwd: app, env: daemonEnv });
    if (exec.stdout.trim() !== 'hi') fail(`conch exec -- 'echo hi' printed ${JSON.stringify(exec.stdout)}`);
    ok("conch exec -- 'echo hi' printed hi (daemon in a private CONCH_HOME)");
    stopStarted();
    stopStarted = () => {};
    const status = spawnSync(bin('conch'), ['daemon', 'status'], {
      cwd: app,
      env: daemonEnv,
      timeout: RUN_TIMEOUT_MS,
    });
    if (status.status !== 3) fail('the daemon still runs after conch daemon stop');
  } else if (install.name === '@conch/mcp-server') {
    const { results } = await mcpExchange({
      command: bin('conch-mcp'),
      cwd: app,
      env,
      requests: [
        { method: 'tools/list' },
        { method: 'tools/call', params: { name: 'execute', arguments: { command: 'echo hi' } } },
      ],
      timeoutMs: RUN_TIMEOUT_MS,
    }).catch((error) => fail(`conch-mcp: ${error.message}`));
    const tools = results[0].tools.map((t) => t.name);
    if (!tools.includes('execute')) fail(`conch-mcp's tools/list has no execute: ${tools.join(', ')}`);
    if (tools.includes('delegate_task')) fail('conch-mcp lists delegate_task without an opencode binary');
    if (!/^hi$/m.test(resultText(results[1]))) fail(`execute echo hi gave ${resultText(results[1])}`);
    ok(`conch-mcp answered initialize, tools/list (${tools.length} tools, no delegate_task) and execute`);
  } else {
    const { results } = await mcpExchange({
      command: bin('conch-opencode'),
      cwd: app,
      env,
      requests: [{ method: 'tools/list' }],
      timeoutMs: RUN_TIMEOUT_MS,
    }).catch((error) => fail(`conch-opencode: ${error.message}`));
    const tools = results[0].tools.map((t) => t.name);
    if (!tools.includes('delegate_task')) fail(`conch-opencode lists ${tools.join(', ')}`);
    ok('conch-opencode answered initialize and tools/list (delegate_task)');
  }
}

async function main() {
  const tarballs = join(work, 'tarballs');
  const unpacked = join(work, 'unpacked');
  for (const dir of [tarballs, unpacked]) mkdirSync(dir);

  const packages = publishablePackages();
  const manifests = new Map(packages.map((p) => [p.manifest.name, p.manifest]));
  for (const install of INSTALLS) {
    if (!manifests.has(install.name)) fail(`${install.name} is not publishable`);
  }
  /** Tarball path by package name. */
  const tarballOf = new Map();
  for (const { dir, manifest } of packages) {
    if (!existsSync(join(dir, 'dist'))) fail(`${manifest.name} is not built (no dist/): build first`);
    const before = new Set(readdirSync(tarballs));
    run(`pnpm pack ${manifest.name}`, 'npx', [...PNPM, 'pack', '--pack-destination', tarballs], { cwd: dir });
    const tarball = readdirSync(tarballs).find((f) => !before.has(f));
    if (!tarball) fail(`pnpm pack ${manifest.name} wrote no tarball`);
    tarballOf.set(manifest.name, join(tarballs, tarball));
    const into = join(unpacked, tarball.replace(/\.tgz$/, ''));
    mkdirSync(into);
    run(`unpack ${tarball}`, 'tar', ['-xzf', join(tarballs, tarball), '-C', into]);
    const packed = JSON.parse(readFileSync(join(into, 'package', 'package.json'), 'utf8'));
    checkManifest(packed, join(into, 'package'));
    ok(
      `${manifest.name}: packed (${tarball}, ${mb(statSync(join(tarballs, tarball)).size)} MB); metadata, README, exports, bin, no workspace: ranges`,
    );
  }

  const sizes = [];
  for (const install of INSTALLS) {
    const app = join(work, install.name.replace(/^@conch\//, 'install-'));
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'conch-install-check', private: true })}\n`,
    );
    const names = closure(install.name, manifests);
    const started = Date.now();
    run(
      `npm install of ${install.name}`,
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...names.map((n) => tarballOf.get(n)),
      ],
      { cwd: app, timeout: INSTALL_TIMEOUT_MS },
    );
    const nodeModules = join(app, 'node_modules');
    const bytes = sizeOf(nodeModules);
    const hasOpencode =
      existsSync(join(nodeModules, 'opencode-ai')) || existsSync(join(nodeModules, '.bin', 'opencode'));
    sizes.push(`${install.name} ${mb(bytes)} MB`);
    ok(
      `${install.name}: installed from ${names.length} tarballs into an empty directory in ${Math.round((Date.now() - started) / 1000)} s: ${mb(bytes)} MB${install.maxMb ? ` (at most ${install.maxMb} MB)` : ''}, ${hasOpencode ? 'with' : 'no'} OpenCode`,
    );
    if (install.maxMb && bytes > install.maxMb * 1e6)
      fail(
        `${install.name} installs ${mb(bytes)} MB, more than ${install.maxMb} MB: ${biggest(nodeModules)}`,
      );
    if (!install.opencode && hasOpencode) fail(`${install.name} installs OpenCode`);
    await checkBins(install, app);
    rmSync(app, { recursive: true, force: true });
  }
  cleanup();
  console.log(`pack-install: installed sizes: ${sizes.join(', ')}`);
  console.log('pack-install: all checks passed');
}

main().catch((error) => {
  if (!failed) fail(error instanceof Error ? (error.stack ?? error.message) : String(error));
});
