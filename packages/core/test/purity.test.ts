import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every runtime source file of the core (tests and the ./testing subpath excluded). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'testing') out.push(...sources(path));
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** Libraries of pure computation (no I/O, no timers) the core may use at runtime. */
const PURE_LIBRARIES = new Set(['re2js']);

describe('core purity (docs/architecture.md: no I/O, no timers of its own)', () => {
  const files = sources(join(import.meta.dirname, '..', 'src'));

  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files)(
    '%s imports nothing from node: or other packages at runtime (pure libraries aside)',
    (file) => {
      const text = readFileSync(file, 'utf8');
      const imports = [...text.matchAll(/^import\s+(?!type\b)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map(
        (m) => m[1]!,
      );
      for (const spec of imports) {
        expect(spec.startsWith('.') || PURE_LIBRARIES.has(spec), `${file} imports ${spec}`).toBe(true);
      }
      expect(text).not.toMatch(/\brequire\(/);
    },
  );

  // clock.ts is where the real clock wraps the host's timers; nothing else may touch them.
  it.each(files.filter((f) => !f.endsWith('/clock.ts')))('%s starts no timers of its own', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/(?<![.\w])(setTimeout|setInterval|setImmediate)\(/);
  });
});
