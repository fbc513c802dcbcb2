/**
 * A small test image built on this machine, with no registry: the programs conch's tests run (bash, sh,
 * coreutils, grep, sed, awk, setsid, stty, python3, vim, less…) and the libraries they load (`ldd`), copied
 * from the host into a root file system (merged /usr, as Debian lays it out) and packed as a tarball that
 * `podman import` turns into an image. The tarball is built once per machine and content (cached under the
 * OS temp dir); importing it into an engine's storage takes a second.
 */

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Bump to rebuild every cached tarball. */
const IMAGE_VERSION = 1;

/** The programs copied into the image (absolute paths on this Debian-like host; missing ones are skipped). */
export const TEST_IMAGE_PROGRAMS = [
  '/usr/bin/bash',
  '/usr/bin/dash',
  '/usr/bin/zsh',
  '/usr/bin/sleep',
  '/usr/bin/cat',
  '/usr/bin/echo',
  '/usr/bin/true',
  '/usr/bin/false',
  '/usr/bin/ls',
  '/usr/bin/env',
  '/usr/bin/id',
  '/usr/bin/mktemp',
  '/usr/bin/getent',
  '/usr/bin/cut',
  '/usr/bin/grep',
  '/usr/bin/sed',
  '/usr/bin/mawk',
  '/usr/bin/tr',
  '/usr/bin/readlink',
  '/usr/bin/uname',
  '/usr/bin/stty',
  '/usr/bin/rm',
  '/usr/bin/mkdir',
  '/usr/bin/chmod',
  '/usr/bin/head',
  '/usr/bin/tail',
  '/usr/bin/wc',
  '/usr/bin/seq',
  '/usr/bin/od',
  '/usr/bin/pwd',
  '/usr/bin/touch',
  '/usr/bin/test',
  '/usr/bin/printf',
  '/usr/bin/kill',
  '/usr/bin/setsid',
  '/usr/bin/nohup',
  '/usr/bin/timeout',
  '/usr/bin/yes',
  '/usr/bin/ps',
  '/usr/bin/less',
  '/usr/bin/vim.basic',
  '/usr/bin/python3.11',
] as const;

/** Names that point at programs above (`sh` → dash, `awk` → mawk, `python3`, `vim`). */
const LINKS: Readonly<Record<string, string>> = {
  '/usr/bin/sh': 'dash',
  '/usr/bin/awk': 'mawk',
  '/usr/bin/python3': 'python3.11',
  '/usr/bin/vim': 'vim.basic',
};

/** Python's standard library, without what no test needs. */
const PYTHON_LIB = '/usr/lib/python3.11';
const PYTHON_SKIP = new Set([
  'test',
  'idlelib',
  'tkinter',
  'lib2to3',
  'ensurepip',
  'pydoc_data',
  'dist-packages',
  'site-packages',
  'turtledemo',
  'config-3.11-x86_64-linux-gnu',
]);

/** Terminal descriptions vim, less and bash read. */
const TERMINFO = ['/usr/share/terminfo', '/usr/lib/terminfo', '/etc/terminfo', '/lib/terminfo'];

function copyPreserving(root: string, path: string): void {
  const target = join(root, path);
  if (existsSync(target)) return;
  mkdirSync(dirname(target), { recursive: true });
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) {
    symlinkSync(readlinkSync(path), target);
    copyPreserving(root, realpathSync(path));
  } else if (stat.isDirectory()) {
    mkdirSync(target, { recursive: true });
    for (const name of readdirSync(path)) copyPreserving(root, join(path, name));
  } else if (stat.isFile()) {
    copyFileSync(path, target);
    chmodSync(target, stat.mode & 0o7777);
  }
}

/** `path` as seen through the host's merged /usr (`/lib/x` → `/usr/lib/x`). */
function canonical(path: string): string {
  try {
    return join(realpathSync(dirname(path)), path.slice(path.lastIndexOf('/') + 1));
  } catch {
    return path;
  }
}

function libraries(program: string): string[] {
  let out: string;
  try {
    out = execFileSync('ldd', [program], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [];
  }
  return [...out.matchAll(/(\/\S+)/g)].map((m) => m[1]!).filter((p) => existsSync(p));
}

/** The programs of {@link TEST_IMAGE_PROGRAMS} this host has. */
function presentPrograms(): string[] {
  return TEST_IMAGE_PROGRAMS.filter((p) => existsSync(p));
}

/** Builds the root file system into `root` (see the module doc). */
function buildRoot(root: string): void {
  for (const dir of [
    'usr/bin',
    'usr/lib',
    'usr/lib64',
    'usr/sbin',
    'etc',
    'root',
    'home/ada',
    'tmp',
    'dev',
    'proc',
    'sys',
  ]) {
    mkdirSync(join(root, dir), { recursive: true });
  }
  chmodSync(join(root, 'tmp'), 0o1777);
  for (const [link, to] of [
    ['bin', 'usr/bin'],
    ['lib', 'usr/lib'],
    ['lib64', 'usr/lib64'],
    ['sbin', 'usr/sbin'],
  ] as const) {
    symlinkSync(to, join(root, link));
  }
  for (const program of presentPrograms()) {
    copyPreserving(root, program);
    for (const lib of libraries(program)) {
      const path = canonical(lib);
      copyPreserving(root, path);
      // The loader is asked for by its /lib64 name.
      if (lib.startsWith('/lib64/') && !existsSync(join(root, 'usr', lib))) {
        copyFileSync(realpathSync(lib), join(root, 'usr', lib));
        chmodSync(join(root, 'usr', lib), 0o755);
      }
    }
  }
  for (const [link, to] of Object.entries(LINKS)) {
    if (existsSync(join(root, dirname(link), to)) && !existsSync(join(root, link)))
      symlinkSync(to, join(root, link));
  }
  if (existsSync(PYTHON_LIB)) {
    for (const name of readdirSync(PYTHON_LIB)) {
      if (!PYTHON_SKIP.has(name)) copyPreserving(root, join(PYTHON_LIB, name));
    }
    // Its extension modules' libraries (readline for the REPL, …).
    const dynload = join(PYTHON_LIB, 'lib-dynload');
    for (const name of existsSync(dynload) ? readdirSync(dynload) : []) {
      for (const lib of libraries(join(dynload, name))) copyPreserving(root, canonical(lib));
    }
  }
  for (const dir of TERMINFO) if (existsSync(dir)) copyPreserving(root, dir);
  writeFileSync(
    join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/bash\nada:x:1000:1000:Ada:/home/ada:/bin/bash\n',
  );
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\nada:x:1000:\n');
  writeFileSync(join(root, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\n');
  execFileSync('chown', ['1000:1000', join(root, 'home/ada')]);
}

/**
 * The path of the test image's root file system tarball, built on first use (cached by the program list
 * and the host's copies of them; concurrent builders each write their own file and rename it into place).
 */
export function testImageTarball(): string {
  const programs = presentPrograms();
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        IMAGE_VERSION,
        programs,
        sizes: programs.map((p) => lstatSync(realpathSync(p)).size),
      }),
    )
    .digest('hex')
    .slice(0, 16);
  const tarball = join(tmpdir(), `conch-test-image-${hash}.tar`);
  if (existsSync(tarball)) return tarball;
  const work = join(tmpdir(), `conch-test-image-${hash}-${process.pid}-${Date.now()}`);
  const root = join(work, 'root');
  try {
    mkdirSync(root, { recursive: true });
    buildRoot(root);
    execFileSync('tar', ['-C', root, '-cf', join(work, 'root.tar'), '.']);
    renameSync(join(work, 'root.tar'), tarball);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return tarball;
}

/** The tag of the test image (its content hash): `localhost/conch-test:<hash>`. */
export function testImageTag(tarball: string): string {
  const hash = /conch-test-image-([0-9a-f]+)\.tar$/.exec(tarball)?.[1] ?? 'latest';
  return `localhost/conch-test:${hash}`;
}
