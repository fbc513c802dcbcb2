#!/usr/bin/env node
// The repository stands alone: every relative link in a Markdown file points at a file that is in the
// repository, and no file cites a document users never get (a SPEC or LESSONS file that is not here,
// or a path outside the checkout), and the README links every page under docs/. Prints each broken
// reference and exits 1 when there is one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && existsSync(join(root, f)));

/** Documents that are not part of the repository, however they are cited. */
const FOREIGN = [/\bSPEC(\.md)?\b/, /\bLESSONS(\.md)?\b/, /\bARCHITECTURE(\.md)?\b/, /\.\.\/shared\//];
const TEXT = /\.(md|ts|mts|mjs|js|json|ya?ml|sh)$|(^|\/)(run|Dockerfile)$/;
const problems = [];

for (const file of files) {
  if (!TEXT.test(file) || file === 'pnpm-lock.yaml' || file.startsWith('scripts/check-links')) continue;
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const pattern of FOREIGN)
      if (pattern.test(line))
        problems.push(`${file}:${i + 1}: cites ${line.match(pattern)?.[0]}, which is not in the repository`);
  });
  if (!file.endsWith('.md')) continue;
  // [text](target) and [label]: target — relative targets only.
  const targets = [
    ...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g),
    ...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm),
  ].map((m) => m[1]);
  for (const target of targets) {
    if (/^([a-z][a-z0-9+.-]*:|#|mailto:)/i.test(target)) continue;
    const path = decodeURIComponent(target.split('#')[0] ?? '');
    if (path === '') continue;
    const absolute = resolve(dirname(join(root, file)), path);
    if (relative(root, absolute).startsWith('..'))
      problems.push(`${file}: links outside the repository: ${target}`);
    else if (!existsSync(absolute)) problems.push(`${file}: broken link: ${target}`);
  }
}

// Every concept page is reachable from the README's list (one page per concept under docs/).
const readme = readFileSync(join(root, 'README.md'), 'utf8');
for (const file of files)
  if (/^docs\/[^/]+\.md$/.test(file) && !readme.includes(`](${file})`))
    problems.push(`README.md: no link to ${file} (every page under docs/ is listed there)`);

for (const p of problems) process.stderr.write(`${p}\n`);
process.stdout.write(
  problems.length === 0
    ? `links: ${files.length} files checked, no reference to a file outside the repository\n`
    : `links: ${problems.length} broken reference(s)\n`,
);
process.exit(problems.length === 0 ? 0 : 1);
