// What a client command (`conch exec`, `conch ps`…) loads before it runs, read from the built bundle: the
// entry, the file it requires right after, and everything that file requires. The engine, the policy parser,
// zod, the MCP SDK and the screen emulator load with the commands that serve (the daemon, `conch mcp`), never
// with a client. `conch --version` loads the entry and the bundler's helpers only. The program's chunk is
// compiled from the compile cache from the second run on. And a command defined alone (runCli's fast path)
// says the same as the whole program.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../src/program.js';
import { CLI_VERSION } from '../src/version.js';
import { BIN, type CliHome, createHome } from './harness.js';

const DIST = dirname(BIN);

/** The matches of `pattern`'s first group in `file`. */
function requiresOf(file: string, pattern: RegExp): string[] {
  return [...readFileSync(join(DIST, file), 'utf8').matchAll(pattern)].map((m) => m[1] as string);
}

/** The files `file` requires when it loads (top-level requires of the bundle's own files). */
function staticRequiresOf(file: string): string[] {
  return requiresOf(file, /^(?:(?:const|let|var) [\w$]+ = )?require\("\.\/([^"]+\.cjs)"\);$/gm);
}

/** The files `file` requires later (`import()` in the sources). */
function lazyRequiresOf(file: string): string[] {
  return requiresOf(file, /Promise\.resolve\(\)\.then\(\(\) => require\("\.\/([^"]+\.cjs)"\)\)/g);
}

/** `file` and what it requires when it loads, transitively. */
function loadedWith(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const next of staticRequiresOf(file)) loadedWith(next, seen);
  return seen;
}

/** The files a start loads: the entry with its static requires, its lazy require(s) with theirs. */
function startFiles(): string[] {
  const seen = loadedWith('bin.cjs');
  for (const lazy of lazyRequiresOf('bin.cjs')) loadedWith(lazy, seen);
  return [...seen];
}

/** The source modules bundled into `file` (rolldown writes a `// path` line before each). */
function modulesOf(file: string): string[] {
  return [...readFileSync(join(DIST, file), 'utf8').matchAll(/^\/\/ (\S+\.(?:ts|js|cjs|mjs))$/gm)].map(
    (m) => m[1] as string,
  );
}

describe("a client command's start", () => {
  const homes: CliHome[] = [];
  afterAll(async () => {
    for (const home of homes) await home.dispose();
  });

  it('loads no engine, policy parser, zod, MCP SDK or screen emulator', () => {
    const files = startFiles();
    expect(files.length).toBeGreaterThan(1);
    const modules = files.flatMap(modulesOf);
    // The client's own modules are there (the check reads what it should).
    expect(modules.some((m) => m.endsWith('src/daemon-client.ts'))).toBe(true);
    const heavy = modules.filter((m) =>
      /core\/src\/engine\/session-manager|policy\/src\/analyse|\/zod\/|@modelcontextprotocol|@xterm|\/unbash\//.test(
        m,
      ),
    );
    expect(heavy).toEqual([]);
  });

  it("`--version` loads the entry and the bundler's helpers only, and says the version without a package.json", () => {
    const files = [...loadedWith('bin.cjs')];
    // The program is loaded lazily, and not also at the entry's top.
    expect(lazyRequiresOf('bin.cjs')).toHaveLength(1);
    expect(files).not.toContain(lazyRequiresOf('bin.cjs')[0]);
    for (const file of files) {
      expect(readFileSync(join(DIST, file), 'utf8'), file).not.toContain('package.json');
      if (file !== 'bin.cjs') expect(modulesOf(file), file).toEqual([String.raw`\0rolldown/runtime.js`]);
    }
    const run = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    expect(run.stdout).toBe(`${CLI_VERSION}\n`);
  });

  it('runs from the old ES-module path of the bin too (dist/bin.js)', () => {
    const run = spawnSync(process.execPath, [join(DIST, 'bin.js'), '--version'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${CLI_VERSION}\n`);
  });

  it('compiles the program from the compile cache after the first run, and again when the cache is damaged', async () => {
    const home = createHome();
    homes.push(home);
    const cache = mkdtempSync(join(tmpdir(), 'conch-compile-cache-'));
    try {
      home.env.XDG_CACHE_HOME = cache;
      const program = lazyRequiresOf('bin.cjs')[0] as string;
      /** The cache's entry of the program's chunk: its path and when it was written. */
      const entry = () => {
        const dirs = readdirSync(join(cache, 'conch', 'compile-cache'));
        expect(dirs).toHaveLength(1);
        const dir = join(cache, 'conch', 'compile-cache', dirs[0] as string);
        const name = readdirSync(dir).find((n) => n.startsWith(`${program}.`));
        expect(name, `an entry for ${program} in ${readdirSync(dir).join(', ')}`).toBeDefined();
        const path = join(dir, name as string);
        return { path, written: statSync(path).mtimeMs, mode: statSync(dir).mode & 0o777 };
      };
      expect((await home.conch(['exec', '--', 'echo', 'one'])).stdout).toContain('one');
      const first = entry();
      expect(first.mode).toBe(0o700);
      // A second run reads the entry and writes nothing (V8 took it; one it rejects is written again).
      expect((await home.conch(['exec', '--', 'echo', 'two'])).stdout).toContain('two');
      expect(entry().written).toBe(first.written);
      // A damaged entry is rejected by V8, the run is whole, and the entry is written again.
      writeFileSync(first.path, 'not code');
      const third = await home.conch(['exec', '--', 'echo', 'three']);
      expect(third.stdout).toContain('three');
      expect(third.stderr).toBe('');
      expect(statSync(entry().path).size).toBeGreaterThan('not code'.length);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('defines a command alone with the help and errors of the whole program', async () => {
    const home = createHome();
    homes.push(home);
    const all = await home.conch(['--help']);
    for (const name of COMMAND_NAMES) expect(all.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    for (const name of ['exec', 'ps', 'daemon'] as const) {
      // `conch help NAME` builds every command; `conch NAME --help` builds NAME alone.
      const whole = await home.conch(['help', name]);
      const alone = await home.conch([name, '--help']);
      expect(alone.code).toBe(0);
      expect(alone.stdout).toBe(whole.stdout);
    }
    const bad = await home.conch(['exec', '--no-such-flag', '--', 'true']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--no-such-flag'");
  });
});
