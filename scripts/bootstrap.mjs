#!/usr/bin/env node
// Makes a fresh clone runnable: installs dependencies with the pinned pnpm and builds every package,
// only when needed. Everything it prints goes to stderr, so it can run in front of the stdio MCP server.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = ['-y', 'pnpm@10.34.9'];

function run(args, what) {
  process.stderr.write(`[conch bootstrap] ${what}…\n`);
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  const r = spawnSync('npx', [...PNPM, ...args], { cwd: root, stdio: ['ignore', 2, 2], env });
  if (r.status !== 0) {
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

/** Packages whose dist is missing or older than their src. */
function staleBuilds() {
  const stale = [];
  for (const group of ['packages', 'apps']) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base)) {
      const src = join(base, name, 'src');
      const dist = join(base, name, 'dist');
      if (!existsSync(src)) continue;
      if (!existsSync(dist) || newestMtime(src) > newestMtime(dist)) stale.push(`${group}/${name}`);
    }
  }
  return stale;
}

export function bootstrap() {
  const installed = existsSync(join(root, 'node_modules', '.modules.yaml'));
  const lockNewer =
    installed &&
    statSync(join(root, 'pnpm-lock.yaml')).mtimeMs >
      statSync(join(root, 'node_modules', '.modules.yaml')).mtimeMs;
  if (!installed || lockNewer) run(['install', '--frozen-lockfile'], 'installing dependencies');
  if (staleBuilds().length > 0)
    run(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], 'building');
}

if (import.meta.url === `file://${process.argv[1]}`) bootstrap();
