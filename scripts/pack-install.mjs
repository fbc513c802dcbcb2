#!/usr/bin/env node
/**
 * The install check a user's `npm install` would do: packs every publishable workspace package (not
 * `"private": true`) with `pnpm pack`, installs the tarballs into an empty temporary directory with npm, and
 * runs the installed binaries there: `conch exec -- 'echo hi'` (with a private CONCH_HOME, daemon stopped
 * afterwards) must print `hi`, and `conch-mcp` must answer `initialize` and `tools/list` over stdio.
 *
 * It also checks each publishable package.json: no `workspace:` range in the packed manifest, `files`,
 * `exports` (every target present in the tarball), `bin` (present and executable) and `engines.node`.
 *
 * Run after a build: `node scripts/pack-install.mjs` (CI: `.ci/run`). Prints one line per check and exits 1
 * on the first failure. Every step has a time bound; node-pty compiles with node-gyp during the install.
 */

import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = ['-y', 'pnpm@10.34.9'];
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const RUN_TIMEOUT_MS = 60_000;
/** The binaries that must work after the install, and the packages that provide them. */
const REQUIRED_BINS = { conch: '@conch/cli', 'conch-mcp': '@conch/mcp-server' };

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

/** Publishable workspace packages: every packages/* and apps/* package.json without "private": true. */
function publishablePackages() {
  const found = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, group))) {
      const dir = join(root, group, name);
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      if (manifest.private === true) continue;
      found.push({ dir, manifest });
    }
  }
  return found;
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
  const text = JSON.stringify(packed);
  if (text.includes('workspace:')) fail(`${name}: the packed package.json still has a workspace: range`);
  if (!Array.isArray(packed.files) || packed.files.length === 0) fail(`${name}: no "files" list`);
  if (!packed.engines?.node) fail(`${name}: no "engines.node"`);
  if (!packed.license) fail(`${name}: no "license"`);
  if (packed.publishConfig?.access !== 'public')
    fail(`${name}: a scoped package needs publishConfig.access public`);
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

/** Speaks MCP over the installed conch-mcp's stdio: initialize, then tools/list; resolves with the tool names. */
function mcpToolNames(bin, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bin, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('conch-mcp did not answer within the time bound'));
    }, RUN_TIMEOUT_MS);
    let buffer = '';
    let stderr = '';
    let tools;
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buffer += d;
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.trim() === '') continue;
        const message = JSON.parse(line);
        if (message.id === 1) {
          if (!message.result?.serverInfo) reject(new Error(`initialize failed: ${line}`));
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
        } else if (message.id === 2) {
          tools = (message.result?.tools ?? []).map((t) => t.name);
          child.stdin.end(); // EOF: the server shuts down
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (tools === undefined) reject(new Error(`conch-mcp exited ${code} before tools/list:\n${stderr}`));
      else resolvePromise(tools);
    });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'pack-install', version: '0' },
      },
    });
  });
}

async function main() {
  const tarballs = join(work, 'tarballs');
  const unpacked = join(work, 'unpacked');
  const app = join(work, 'app');
  for (const dir of [tarballs, unpacked, app]) mkdirSync(dir);

  const packages = publishablePackages();
  for (const [bin, owner] of Object.entries(REQUIRED_BINS)) {
    if (!packages.some((p) => p.manifest.name === owner)) fail(`${owner} (bin ${bin}) is not publishable`);
  }
  for (const { dir, manifest } of packages) {
    if (!existsSync(join(dir, 'dist'))) fail(`${manifest.name} is not built (no dist/): build first`);
    const before = new Set(readdirSync(tarballs));
    run(`pnpm pack ${manifest.name}`, 'npx', [...PNPM, 'pack', '--pack-destination', tarballs], { cwd: dir });
    const tarball = readdirSync(tarballs).find((f) => !before.has(f));
    if (!tarball) fail(`pnpm pack ${manifest.name} wrote no tarball`);
    const into = join(unpacked, tarball.replace(/\.tgz$/, ''));
    mkdirSync(into);
    run(`unpack ${tarball}`, 'tar', ['-xzf', join(tarballs, tarball), '-C', into]);
    const packed = JSON.parse(readFileSync(join(into, 'package', 'package.json'), 'utf8'));
    checkManifest(packed, join(into, 'package'));
    ok(`${manifest.name}: packed (${tarball}); files, exports, bin, engines, no workspace: ranges`);
  }

  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'conch-install-check', private: true })}\n`,
  );
  const all = readdirSync(tarballs).map((f) => join(tarballs, f));
  const started = Date.now();
  run(
    'npm install of the tarballs',
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...all],
    {
      cwd: app,
      timeout: INSTALL_TIMEOUT_MS,
    },
  );
  ok(
    `npm install of ${all.length} tarballs into an empty directory (${Math.round((Date.now() - started) / 1000)} s)`,
  );

  const bin = (name) => join(app, 'node_modules', '.bin', name);
  for (const name of Object.keys(REQUIRED_BINS))
    if (!existsSync(bin(name))) fail(`no ${name} binary after the install`);
  const home = join(work, 'conch-home');
  const env = { ...process.env, CONCH_HOME: home, NO_COLOR: '1' };
  stopStarted = () => spawnSync(bin('conch'), ['daemon', 'stop'], { cwd: app, env, timeout: RUN_TIMEOUT_MS });
  const exec = run('conch exec', bin('conch'), ['exec', '--', 'echo hi'], { cwd: app, env });
  if (exec.stdout.trim() !== 'hi') fail(`conch exec -- 'echo hi' printed ${JSON.stringify(exec.stdout)}`);
  ok("conch exec -- 'echo hi' printed hi (daemon in a private CONCH_HOME)");
  stopStarted();
  stopStarted = () => {};
  const status = spawnSync(bin('conch'), ['daemon', 'status'], { cwd: app, env, timeout: RUN_TIMEOUT_MS });
  if (status.status !== 3) fail('the daemon still runs after conch daemon stop');

  const tools = await mcpToolNames(bin('conch-mcp'), { ...process.env, NO_COLOR: '1' }).catch((error) =>
    fail(error.message),
  );
  if (!tools.includes('execute')) fail(`conch-mcp's tools/list has no execute: ${tools.join(', ')}`);
  ok(`conch-mcp answered initialize and tools/list (${tools.length} tools)`);
  cleanup();
  console.log('pack-install: all checks passed');
}

main().catch((error) => {
  if (!failed) fail(error instanceof Error ? (error.stack ?? error.message) : String(error));
});
