// What a client command (`conch exec`, `conch ps`…) loads before it runs, read from the built bundle: the
// entry, the file it imports right after, and everything that file imports. The engine, the policy parser,
// zod, the MCP SDK and the screen emulator load with the commands that serve (the daemon, `conch mcp`), never
// with a client. And a command defined alone (runCli's fast path) says the same as the whole program.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../src/program.js';
import { BIN, type CliHome, createHome } from './harness.js';

const DIST = dirname(BIN);

/** The matches of `pattern`'s first group in `file`. */
function importsOf(file: string, pattern: RegExp): string[] {
  return [...readFileSync(join(DIST, file), 'utf8').matchAll(pattern)].map((m) => m[1] as string);
}

/** The files `file` imports statically. */
function staticImportsOf(file: string): string[] {
  return importsOf(file, /(?:from|import)\s*"\.\/([^"]+\.js)"/g);
}

/** The files a start loads: the entry's static imports, its dynamic import(s), and their static imports. */
function startFiles(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of staticImportsOf(file)) visit(next);
  };
  visit('bin.js');
  for (const lazy of importsOf('bin.js', /import\("\.\/([^"]+\.js)"\)/g)) visit(lazy);
  return [...seen];
}

/** The source modules bundled into `file` (rolldown writes a `// path` line before each). */
function modulesOf(file: string): string[] {
  return [...readFileSync(join(DIST, file), 'utf8').matchAll(/^\/\/ (\S+\.(?:ts|js|cjs|mjs))$/gm)].map(
    (m) => m[1] as string,
  );
}

describe("a client command's start", () => {
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

  it('imports no built-in as an ES module (each would build a facade running every lazy getter)', () => {
    for (const file of startFiles()) {
      const builtins = importsOf(file, /^import\b[^;]*?"(node:[^"]+)"/gm);
      expect(
        builtins.filter((specifier) => specifier !== 'node:module'),
        file,
      ).toEqual([]);
    }
  });

  it('says its version without reading a package.json (the bundler wrote it in)', () => {
    const files = ['bin.js', ...staticImportsOf('bin.js')];
    for (const file of files)
      expect(readFileSync(join(DIST, file), 'utf8'), file).not.toContain('package.json');
  });

  const homes: CliHome[] = [];
  afterAll(async () => {
    for (const home of homes) await home.dispose();
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
