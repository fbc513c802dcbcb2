/**
 * What a publishable workspace package (every packages/* and apps/* package.json without `"private": true`)
 * must have before it is published: the metadata a registry page shows and a user's tools read, and a
 * README that says what the package is for. One definition, used by the test
 * (scripts/test/packages.test.mjs, so CI fails when something is missing) and by pack-install.mjs (on the
 * packed manifests).
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The repository every package points at: the root package.json's `repository.url`. */
export function repositoryUrl() {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).repository?.url;
}

/** The publishable workspace packages: `{ dir, manifest }` for each. */
export function publishablePackages() {
  const found = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(ROOT, group))) {
      const dir = join(ROOT, group, name);
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      if (manifest.private !== true) found.push({ dir, manifest });
    }
  }
  return found;
}

/** Shortest README accepted: a title and a sentence or two saying what the package is for. */
const MIN_README_CHARS = 120;

/**
 * What is missing or wrong in a publishable package's manifest (and README, in `dir`): a list of problems,
 * empty when it is ready. `source` is true for the workspace's own package.json (whose `repository.directory`
 * must be its path in the repository); false for a packed one.
 */
export function publishProblems(manifest, dir, { source = true } = {}) {
  const problems = [];
  const need = (ok, what) => {
    if (!ok) problems.push(what);
  };
  need(typeof manifest.description === 'string' && manifest.description.length >= 20, 'a "description"');
  need(
    Array.isArray(manifest.keywords) &&
      manifest.keywords.length > 0 &&
      manifest.keywords.every((k) => typeof k === 'string'),
    '"keywords"',
  );
  need(typeof manifest.license === 'string' && manifest.license !== '', 'a "license"');
  need(typeof manifest.engines?.node === 'string', '"engines.node"');
  const repo = manifest.repository;
  need(
    repo && typeof repo === 'object' && repo.type === 'git' && repo.url === repositoryUrl(),
    `"repository" {type: git, url: the root package.json's (${repositoryUrl()})}`,
  );
  if (source && repo && typeof repo === 'object') {
    need(
      repo.directory === relative(ROOT, dir),
      `"repository.directory": "${relative(ROOT, dir)}" (its path in the repository)`,
    );
  }
  need(Array.isArray(manifest.files) && manifest.files.length > 0, 'a "files" list');
  need(manifest.publishConfig?.access === 'public', '"publishConfig.access": "public" (a scoped package)');
  const readme = join(dir, 'README.md');
  need(
    existsSync(readme) && readFileSync(readme, 'utf8').trim().length >= MIN_README_CHARS,
    'a README.md saying what the package is for',
  );
  return problems;
}
