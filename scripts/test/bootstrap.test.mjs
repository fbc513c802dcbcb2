// The bootstrap behind the README's start commands (scripts/conch-mcp.mjs, conch.mjs, conch-opencode.mjs):
// a failed install prints its cause and the fix in a few lines, on stderr only. The whole first run from a
// fresh clone with an empty HOME (which downloads from the registry) is the CI step
// scripts/fresh-clone-check.mjs, not a test: tests reach no host but 127.0.0.1.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { explainFailure, relevantLines } from '../bootstrap.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let work;
let clone;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-bootstrap-test-'));
  clone = join(work, 'repo');
  mkdirSync(clone);
  // The repository's files as a clone has them (tracked and new files, nothing ignored, no node_modules).
  const copy = spawnSync(
    'sh',
    ['-c', 'git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$0"', clone],
    { cwd: repo, encoding: 'utf8' },
  );
  expect(copy.stderr).toBe('');
  expect(copy.status).toBe(0);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a failed first run', () => {
  test.each([
    ['scripts/conch-mcp.mjs', "the server's"],
    ['scripts/conch.mjs', "the CLI's"],
  ])('%s with an unreachable registry and an empty HOME prints the cause and the fix', (script, what) => {
    const home = mkdtempSync(join(work, 'home-'));
    const r = spawnSync(process.execPath, [join(clone, script), 'exec', '--', 'true'], {
      cwd: clone,
      encoding: 'utf8',
      input: '',
      timeout: 90_000,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        npm_config_registry: 'http://127.0.0.1:9',
        npm_config_fetch_retries: '0',
      },
    });
    expect(r.status).not.toBe(0);
    // stdout is the MCP channel of conch-mcp: nothing may be printed there.
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(16);
    expect(r.stderr).toContain(`installing ${what} dependencies failed`);
    // The cause, as the tool said it, and in words.
    expect(r.stderr).toMatch(/ECONNREFUSED/);
    expect(r.stderr).toContain('the package registry could not be reached (http://127.0.0.1:9)');
    expect(lines.at(-1)).toMatch(/^\[conch bootstrap\] fix: .*proxy.*registry/);
  });
});

describe('explainFailure', () => {
  test('pnpm stopping to ask before it reinstalls node_modules says what to remove', () => {
    const output =
      ' ERR_PNPM_ABORTED_REMOVE_MODULES_DIR_NO_TTY  Aborted removal of modules directory due to no TTY\n\nIf you are running pnpm in CI, set the CI environment variable to "true".';
    const { cause, fix } = explainFailure(output, 'npx -y pnpm@10.34.9 install');
    expect(cause).toMatch(/reinstall node_modules/);
    expect(fix).toMatch(/rm -rf .*node_modules/);
    expect(relevantLines(output)).toEqual([
      ' ERR_PNPM_ABORTED_REMOVE_MODULES_DIR_NO_TTY  Aborted removal of modules directory due to no TTY',
    ]);
  });

  test('an unknown failure names the command to run by hand', () => {
    const { cause, fix } = explainFailure('something odd\n', 'npx -y pnpm@10.34.9 install --frozen-lockfile');
    expect(cause).toBe('see the output above.');
    expect(fix).toContain('npx -y pnpm@10.34.9 install --frozen-lockfile');
  });
});
