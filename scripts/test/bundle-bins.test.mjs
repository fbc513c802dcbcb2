// Two rewrites of the bundler's output (scripts/bundle-bins.mjs): an entry loses the bare require of a chunk
// it also loads lazily (so that the entry runs before the main chunk loads), and the old ES-module path of a
// bin runs the CommonJS bin. Then the built bins themselves: each entry loads nothing but the bundler's
// helpers before its own code runs (which turns the compile cache on), and its main chunk only lazily.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { deferLazyRequires, esmDoor } from '../bundle-bins.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('deferLazyRequires', () => {
  test('drops the bare require of a lazily loaded chunk, and only that', () => {
    const code = [
      '#!/usr/bin/env node',
      'require("./chunk-main.cjs");',
      'require("./chunk-runtime.cjs");',
      'const helper = require("./chunk-main.cjs");',
      'start();',
      'Promise.resolve().then(() => require("./chunk-main.cjs")).then(run);',
    ].join('\n');
    const out = deferLazyRequires({ code, dynamicImports: ['chunk-main.cjs'] });
    expect(out).toBe(
      [
        '#!/usr/bin/env node',
        'require("./chunk-runtime.cjs");',
        'const helper = require("./chunk-main.cjs");',
        'start();',
        'Promise.resolve().then(() => require("./chunk-main.cjs")).then(run);',
      ].join('\n'),
    );
  });

  test('an entry without lazy chunks is left as it is', () => {
    const code = 'require("./chunk-a.cjs");\nuse();';
    expect(deferLazyRequires({ code, dynamicImports: [] })).toBe(code);
  });
});

describe('esmDoor', () => {
  test("runs the CommonJS bin from the package's ES-module path, with its arguments", () => {
    const dir = mkdtempSync(join(tmpdir(), 'conch-esm-door-'));
    try {
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
      writeFileSync(join(dir, 'tool.cjs'), 'process.stdout.write(JSON.stringify(process.argv.slice(2)));\n');
      writeFileSync(join(dir, 'tool.js'), esmDoor('tool'));
      chmodSync(join(dir, 'tool.js'), 0o755);
      const run = spawnSync(process.execPath, [join(dir, 'tool.js'), 'a', '--b'], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual(['a', '--b']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the built bins', () => {
  for (const app of ['cli', 'mcp-server', 'opencode-bridge']) {
    test(`${app}: the entry requires only the bundler's helpers before it runs, and its main chunk lazily`, () => {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'apps', app, 'package.json'), 'utf8'));
      const bins = Object.values(manifest.bin);
      expect(bins).toEqual(['./dist/bin.cjs']);
      const dist = join(ROOT, 'apps', app, 'dist');
      expect(existsSync(join(dist, 'bin.cjs')), `${app} is built`).toBe(true);
      const entry = readFileSync(join(dist, 'bin.cjs'), 'utf8');
      const atTop = [
        ...entry.matchAll(/^(?:(?:const|let|var) [\w$]+ = )?require\("\.\/(chunk-[^"]+)"\);$/gm),
      ].map((m) => m[1]);
      const lazy = [
        ...entry.matchAll(/Promise\.resolve\(\)\.then\(\(\) => require\("\.\/(chunk-[^"]+)"\)\)/g),
      ].map((m) => m[1]);
      expect(lazy).toHaveLength(1);
      expect(atTop).not.toContain(lazy[0]);
      for (const file of atTop) {
        const modules = [...readFileSync(join(dist, file), 'utf8').matchAll(/^\/\/ (\S+)$/gm)].map(
          (m) => m[1],
        );
        expect(modules, file).toEqual([String.raw`\0rolldown/runtime.js`]);
      }
    });
  }
});
