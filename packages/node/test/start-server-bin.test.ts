// The start of a server bin (src/start-server-bin.ts), in real child processes against the built module: the
// process ends with main's exit code, main gets the bin's arguments, and an error main throws is printed with
// the bin's name and ends the process with 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BUILT = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/start-server-bin.js');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs a bin whose main is `mainSource` (a function expression) with `args`. */
function runBin(mainSource: string, args: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'conch-server-bin-test-'));
  dirs.push(dir);
  const bin = join(dir, 'bin.mjs');
  writeFileSync(
    bin,
    [
      `import { startServerBin } from ${JSON.stringify(pathToFileURL(BUILT).href)};`,
      `startServerBin('demo-server', import.meta.url, async () => ({ main: ${mainSource} }));`,
    ].join('\n'),
  );
  return spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' },
  });
}

describe('startServerBin', () => {
  it("ends the process with main's exit code, main having the bin's arguments", () => {
    const run = runBin('async (argv) => { console.log(JSON.stringify(argv)); return 3; }', ['--flag', 'x']);
    expect(run.stdout).toBe('["--flag","x"]\n');
    expect(run.status).toBe(3);
  });

  it('prints an error main throws as NAME: fatal: … and exits 1', () => {
    const run = runBin('async () => { throw new Error("no config"); }');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^demo-server: fatal: Error: no config\n {4}at /);
  });

  it('prints a thrown non-error as it is', () => {
    const run = runBin('async () => { throw "plain"; }');
    expect(run.status).toBe(1);
    expect(run.stderr).toBe('demo-server: fatal: plain\n');
  });
});
