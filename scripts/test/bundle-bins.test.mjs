// Two rewrites of the bundler's output (scripts/bundle-bins.mjs): an entry loses the bare require of a chunk
// it also loads lazily (so that the entry runs before the main chunk loads), and the old ES-module path of a
// bin runs the CommonJS bin.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { deferLazyRequires, esmDoor } from '../bundle-bins.mjs';

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
