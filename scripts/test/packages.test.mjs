// Ready to publish: every publishable package has what a registry page and a user's tools read
// (scripts/package-rules.mjs), changesets publish scoped packages publicly, and the repository has the
// license its packages name.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { publishablePackages, publishProblems, ROOT } from '../package-rules.mjs';

const packages = publishablePackages();

describe('publishable packages', () => {
  test('there are some (every packages/* and apps/* package without "private": true)', () => {
    expect(packages.map((p) => p.manifest.name)).toContain('@conch/cli');
    expect(packages.map((p) => p.manifest.name)).toContain('@conch/mcp-server');
  });

  test.each(packages.map((p) => [relative(ROOT, p.dir), p]))('%s has everything a publish needs', (_, p) => {
    expect(publishProblems(p.manifest, p.dir)).toEqual([]);
  });

  test('a package without keywords, repository or README is refused, naming what is missing', () => {
    const { dir, manifest } = packages[0];
    const { keywords, repository, ...bare } = manifest;
    const problems = publishProblems(bare, join(dir, 'no-such-dir'));
    expect(problems).toEqual(
      expect.arrayContaining([
        '"keywords"',
        expect.stringContaining('"repository"'),
        'a README.md saying what the package is for',
      ]),
    );
  });
});

test('changesets publish the scoped packages publicly', () => {
  const config = JSON.parse(readFileSync(join(ROOT, '.changeset', 'config.json'), 'utf8'));
  expect(config.access).toBe('public');
});

test('the repository has the MIT license its packages name', () => {
  expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  for (const { manifest } of packages) expect(manifest.license).toBe('MIT');
});
