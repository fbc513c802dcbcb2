#!/usr/bin/env node
/**
 * Installs one workspace package the way a user who wants only it would: packs it and the conch packages it
 * declares as dependencies (transitively; `pnpm pack` turns `workspace:` ranges into versions), installs
 * those tarballs with npm into an empty directory, and imports each of its entries there (`./testing`
 * entries aside: they need the test runner). A runtime import the package does not declare fails here,
 * even when the workspace hides it.
 *
 * Run after a build: `node scripts/install-alone.mjs packages/ssh [packages/node …]`. Prints one line per
 * package and exits 1 on the first failure. The package-topology pins (packages/core/test) check the same
 * rule without installing anything.
 */

import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = ['-y', 'pnpm@10.34.9'];
const TIMEOUT_MS = 8 * 60_000;

/** The workspace's packages by name → directory. */
function workspacePackages() {
  const byName = new Map();
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, group))) {
      const file = join(root, group, name, 'package.json');
      if (existsSync(file)) byName.set(JSON.parse(readFileSync(file, 'utf8')).name, join(root, group, name));
    }
  }
  return byName;
}

function run(what, command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: TIMEOUT_MS, ...options });
  if (result.status !== 0) {
    throw new Error(`${what} failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`);
  }
  return result;
}

/** Installs the package in `dir` alone (see the module doc); throws on failure. */
function installAlone(dir, workspace) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const closure = new Set();
  const visit = (name) => {
    if (closure.has(name)) return;
    closure.add(name);
    const deps =
      JSON.parse(readFileSync(join(workspace.get(name), 'package.json'), 'utf8')).dependencies ?? {};
    for (const dep of Object.keys(deps)) if (workspace.has(dep)) visit(dep);
  };
  visit(manifest.name);
  const work = mkdtempSync(join(tmpdir(), 'conch-alone-'));
  try {
    const tarballs = join(work, 'tarballs');
    const app = join(work, 'app');
    mkdirSync(tarballs);
    mkdirSync(app);
    for (const name of closure) {
      run(`pnpm pack ${name}`, 'npx', [...PNPM, 'pack', '--pack-destination', tarballs], {
        cwd: workspace.get(name),
      });
    }
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'alone', private: true, type: 'module' })}\n`,
    );
    const files = readdirSync(tarballs).map((f) => join(tarballs, f));
    run(
      'npm install',
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...files],
      {
        cwd: app,
      },
    );
    const entries = Object.keys(manifest.exports ?? { '.': null })
      .filter((key) => key !== './package.json' && !key.endsWith('/testing'))
      .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`));
    for (const entry of entries) {
      const loaded = run(
        `import('${entry}')`,
        'node',
        ['-e', `import(${JSON.stringify(entry)}).then((m) => console.log(Object.keys(m).length))`],
        { cwd: app },
      );
      console.log(
        `install-alone: ok   ${entry} loads (${loaded.stdout.trim()} exports) from ${files.length} tarballs: ${[...closure].join(', ')}`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: node scripts/install-alone.mjs PACKAGE_DIR…  (e.g. packages/ssh)');
  process.exit(2);
}
const workspace = workspacePackages();
for (const dir of dirs) {
  try {
    installAlone(resolve(root, dir), workspace);
  } catch (error) {
    console.error(`install-alone: FAIL ${dir}: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
