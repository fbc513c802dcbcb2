/**
 * Every process fact goes through the process-facts interface: no source outside the Linux implementations
 * names a `/proc/` path, so a system without `/proc` loses no fact silently.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');

/** Where `/proc/` paths belong. */
const ALLOWED = new Map([
  // The Linux implementation of the process facts, on this host.
  ['packages/node/src/process-facts/proc-facts.ts', 'the local /proc implementation'],
  // The host scripts' /proc branches: the Linux implementation on a host reached through a channel.
  ['packages/core/src/host/scripts.ts', 'the remote /proc implementation'],
  // Not a process fact: the bubblewrap sandbox (Linux only) looks at a directory through its shell's root.
  ['packages/pty/src/sandbox/sandbox-launcher.ts', "the sandbox's root, seen through its shell"],
  // This process's raw argv bytes (arguments that are not UTF-8 are refused); where /proc is missing Node's
  // decoded argv is all there is, and the check is skipped.
  ['apps/cli/src/argv-text.ts', "this process's raw argv"],
  // Text, not a fact: why a token on the command line is refused.
  ['apps/cli/src/program.ts', 'a path in a message'],
  // Text, not a fact: a command naming /proc/self/fd/0 reads its stdin (the policy's view of a command).
  ['packages/policy/src/stdin.ts', 'a path in command text'],
]);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // Test helpers read /proc as the tests' independent witness.
      if (entry.name !== 'testing' && entry.name !== 'node_modules') out.push(...sources(path));
    } else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

it('no /proc/ path in packages/*/src or apps/*/src outside the Linux implementations and test helpers', () => {
  const offenders: string[] = [];
  for (const area of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, area))) {
      let files: string[];
      try {
        files = sources(join(root, area, name, 'src'));
      } catch {
        continue;
      }
      for (const file of files) {
        const path = relative(root, file);
        if (!ALLOWED.has(path) && readFileSync(file, 'utf8').includes('/proc/')) offenders.push(path);
      }
    }
  }
  expect(offenders).toEqual([]);
});
