#!/usr/bin/env node
/**
 * Builds the web page of `conch web` into `dist/page/`: its script (with xterm.js) and styles bundled by
 * esbuild, and its HTML. Nothing is fetched at run time: the page works offline.
 */

import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'page');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(root, 'page', 'src', 'main.ts') },
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  outdir: out,
  logLevel: 'warning',
});
copyFileSync(join(root, 'page', 'index.html'), join(out, 'index.html'));
