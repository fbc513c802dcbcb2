/**
 * Pins of the workspace's package topology (docs/architecture.md): the set of packages, each one's
 * export-map keys and bins, the dependencies it declares, the layer it lives on, and what its sources
 * import at run time. A user who installs one package gets only what it declares: a runtime import that
 * is not a declared dependency (a dev dependency does not count) works in this workspace and fails in
 * theirs. And each package's entries are its deliberate public surface: none re-exports another
 * package's symbols (the importer names the package that defines them).
 *
 * Each pin below is a decision about what users install and import. A change that breaks one must be
 * deliberate: update the pin in the same change, with a changeset when users see it. Fix your change;
 * never weaken a pin.
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');

/** A package as pinned: its name, export-map keys, bins, declared runtime dependencies and layer. */
interface Pin {
  name: string;
  exports: string[];
  bin?: Record<string, string>;
  /** `dependencies`, exactly (sorted). */
  dependencies: string[];
  /** `peerDependencies`, exactly (sorted). */
  peerDependencies?: string[];
  /**
   * Where it sits in the graph: a package may depend only on conch packages of a lower layer (core 0,
   * helpers 1, drivers 2, service 3, MCP surfaces 4, faces 5).
   */
  layer: number;
}

/** directory → pin */
const PACKAGES: Record<string, Pin> = {
  'packages/core': {
    name: '@conch/core',
    exports: ['.', './engine', './host', './testing'],
    dependencies: ['re2js'],
    peerDependencies: ['vitest'],
    layer: 0,
  },
  'packages/node': {
    name: '@conch/node',
    exports: ['.', './testing'],
    dependencies: ['@conch/core', '@xterm/headless'],
    layer: 1,
  },
  'packages/policy': {
    name: '@conch/policy',
    exports: ['.', './testing'],
    dependencies: ['@conch/core', 'unbash', 'zod'],
    layer: 1,
  },
  'packages/pty': {
    name: '@conch/pty',
    exports: ['.'],
    dependencies: ['@conch/core', '@conch/node', '@lydell/node-pty'],
    layer: 2,
  },
  'packages/ssh': {
    name: '@conch/ssh',
    exports: ['.', './host-key-policies', './testing'],
    dependencies: ['@conch/core', '@conch/node', 'ssh-config', 'ssh2'],
    layer: 2,
  },
  'packages/container': {
    name: '@conch/container',
    exports: ['.', './engine', './testing'],
    dependencies: ['@conch/core', '@conch/node', 'dockerode'],
    layer: 2,
  },
  'packages/delegate': {
    name: '@conch/delegate',
    exports: ['.', './testing'],
    dependencies: ['@conch/core', '@conch/node', '@opencode-ai/sdk', 'zod'],
    peerDependencies: ['opencode-ai'],
    layer: 2,
  },
  'packages/service': {
    name: '@conch/service',
    exports: ['.'],
    dependencies: [
      '@conch/container',
      '@conch/core',
      '@conch/delegate',
      '@conch/node',
      '@conch/policy',
      '@conch/pty',
      '@conch/ssh',
      'commander',
      'zod',
    ],
    layer: 3,
  },
  'packages/mcp': {
    name: '@conch/mcp',
    exports: ['.', './vocabulary', './limits', './line-transport'],
    dependencies: [
      '@conch/core',
      '@conch/delegate',
      '@conch/service',
      '@conch/ssh',
      '@modelcontextprotocol/sdk',
      'zod',
    ],
    layer: 4,
  },
  'apps/mcp-server': {
    name: '@conch/mcp-server',
    exports: ['./package.json'],
    bin: { 'conch-mcp': './dist/bin.cjs' },
    dependencies: ['@conch/mcp', '@conch/node', '@lydell/node-pty', 'ssh2'],
    layer: 5,
  },
  'apps/cli': {
    name: '@conch/cli',
    exports: ['.'],
    bin: { conch: './dist/bin.cjs' },
    dependencies: [
      '@conch/core',
      '@conch/delegate',
      '@conch/mcp',
      '@conch/node',
      '@conch/service',
      '@lydell/node-pty',
      '@modelcontextprotocol/sdk',
      'commander',
      'ssh2',
      'ws',
      'zod',
    ],
    layer: 5,
  },
  'apps/opencode-bridge': {
    name: '@conch/opencode-bridge',
    exports: ['.'],
    bin: { 'conch-opencode': './dist/bin.cjs' },
    dependencies: [
      '@conch/core',
      '@conch/delegate',
      '@conch/node',
      '@modelcontextprotocol/sdk',
      'commander',
      'opencode-ai',
      'zod',
    ],
    layer: 5,
  },
};

/**
 * Declared dependencies no source imports, and why they are declared anyway. Anything else declared and
 * never imported is dead weight for every user who installs the package.
 */
const DECLARED_WITHOUT_IMPORT: Record<string, Record<string, string>> = {
  '@conch/opencode-bridge': { 'opencode-ai': 'ships the opencode binary, found through require.resolve' },
  '@conch/mcp-server': {
    '@lydell/node-pty': 'native: loaded by the bundled bin from node_modules (scripts/bundle-bins.mjs)',
    ssh2: 'native parts: loaded by the bundled bin from node_modules (scripts/bundle-bins.mjs)',
  },
  '@conch/cli': {
    '@lydell/node-pty': 'native: loaded by the bundled bin from node_modules (scripts/bundle-bins.mjs)',
    ssh2: 'native parts: loaded by the bundled bin from node_modules (scripts/bundle-bins.mjs)',
  },
};

interface Manifest {
  name: string;
  private?: boolean;
  type?: string;
  files?: string[];
  bin?: Record<string, string>;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;
}

/** Every source file a package ships (its `src`, tests excluded). */
function shippedSources(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ts$/.test(name) && !/\.(test|spec)\.ts$/.test(name) && !name.endsWith('.d.ts'))
        out.push(path);
    }
  };
  walk(join(root, dir, 'src'));
  return out.sort();
}

/** The package a bare module specifier names (`@scope/name/sub` → `@scope/name`); undefined for relative and `node:` ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier.startsWith('/'))
    return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** What one source file imports and re-exports, as the compiler parses it. */
interface FileImports {
  /** Packages loaded when the file runs: value imports (with `verbatimModuleSyntax`, an import with only inline `type` names still loads its module), `export … from`, `import()`, `require()`, `require.resolve()`. */
  runtime: Set<string>;
  /** Packages named only in `import type` / `export type` / `typeof import()` (needed by the declarations). */
  typeOnly: Set<string>;
  /** Re-exports of another package's symbols, as `file: text`. */
  reexports: string[];
}

function importsOf(file: string): FileImports {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const runtime = new Set<string>();
  const typeOnly = new Set<string>();
  const reexports: string[] = [];
  /** Local names bound by imports from other packages. */
  const importedNames = new Map<string, string>();
  const note = (specifier: string, isType: boolean) => {
    const name = packageOf(specifier);
    if (name !== undefined) (isType ? typeOnly : runtime).add(name);
  };
  const where = `${relative(root, file)}`;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      note(specifier, node.importClause?.isTypeOnly === true);
      if (packageOf(specifier) !== undefined && node.importClause) {
        const clause = node.importClause;
        if (clause.name) importedNames.set(clause.name.text, specifier);
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamedImports(bindings))
          for (const element of bindings.elements) importedNames.set(element.name.text, specifier);
        if (bindings && ts.isNamespaceImport(bindings)) importedNames.set(bindings.name.text, specifier);
      }
    } else if (ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const specifier = node.moduleSpecifier.text;
        note(specifier, node.isTypeOnly);
        if (packageOf(specifier) !== undefined) reexports.push(`${where}: ${node.getText(source)}`);
      } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const element of node.exportClause.elements) {
          const local = (element.propertyName ?? element.name).text;
          const from = importedNames.get(local);
          if (from !== undefined) reexports.push(`${where}: export { ${local} } (imported from ${from})`);
        }
      }
    } else if (ts.isExportAssignment(node) && ts.isIdentifier(node.expression)) {
      const from = importedNames.get(node.expression.text);
      if (from !== undefined)
        reexports.push(`${where}: export default ${node.expression.text} (from ${from})`);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const [first] = node.arguments;
      const callee = node.expression;
      const loads =
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isPropertyAccessExpression(callee) &&
          ts.isIdentifier(callee.expression) &&
          callee.expression.text === 'require' &&
          callee.name.text === 'resolve');
      if (loads && first && ts.isStringLiteralLike(first)) note(first.text, false);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal))
        note(argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { runtime, typeOnly, reexports };
}

/** What a whole package's shipped sources import, by imported package → the files that do. */
function packageImports(dir: string) {
  const runtime = new Map<string, string[]>();
  const typeOnly = new Set<string>();
  const reexports: string[] = [];
  for (const file of shippedSources(dir)) {
    const found = importsOf(file);
    for (const name of found.runtime) runtime.set(name, [...(runtime.get(name) ?? []), relative(root, file)]);
    for (const name of found.typeOnly) typeOnly.add(name);
    reexports.push(...found.reexports);
  }
  return { runtime, typeOnly, reexports };
}

/** Every condition name anywhere in an export-map entry. */
function conditionsOf(entry: unknown): string[] {
  return entry !== null && typeof entry === 'object'
    ? Object.entries(entry).flatMap(([key, value]) => [key, ...conditionsOf(value)])
    : [];
}

const conchNames = new Set(Object.values(PACKAGES).map((p) => p.name));
const layerOf = new Map(Object.values(PACKAGES).map((p) => [p.name, p.layer]));

describe('the package set is pinned', () => {
  it('every package.json under packages/ and apps/ is a pinned, published package', () => {
    const found: string[] = [];
    for (const group of ['packages', 'apps'])
      for (const name of readdirSync(join(root, group)))
        if (existsSync(join(root, group, name, 'package.json'))) found.push(`${group}/${name}`);
    expect(found.sort()).toEqual(Object.keys(PACKAGES).sort());
  });

  it('the workspace root is private', () => {
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).private).toBe(true);
  });
});

for (const [dir, pin] of Object.entries(PACKAGES)) {
  describe(pin.name, () => {
    const m = manifest(dir);
    const imports = packageImports(dir);

    it('is published under the pinned name, ESM, shipping only dist', () => {
      expect(m.name).toBe(pin.name);
      expect(m.private).not.toBe(true);
      expect(m.type).toBe('module');
      expect(m.files).toEqual(['dist']);
    });

    it('has exactly the pinned export-map keys, each with its source, types and build', () => {
      expect(Object.keys(m.exports ?? {})).toEqual(pin.exports);
      for (const [key, entry] of Object.entries(m.exports ?? {})) {
        expect(conditionsOf(entry), `${key} has no require condition (ESM only)`).not.toContain('require');
        if (key === './package.json') continue;
        const source = (entry as Record<string, string>)['conch-source'];
        expect(source, `${key} names its source`).toBeDefined();
        expect(existsSync(join(root, dir, source ?? '')), `${key} → ${source} exists`).toBe(true);
        expect(Object.keys(entry as object)).toEqual(['conch-source', 'types', 'default']);
      }
    });

    it('has exactly the pinned bins', () => {
      expect(m.bin).toEqual(pin.bin);
    });

    it('declares exactly the pinned dependencies', () => {
      expect(Object.keys(m.dependencies ?? {}).sort()).toEqual([...pin.dependencies].sort());
      expect(Object.keys(m.peerDependencies ?? {}).sort()).toEqual([...(pin.peerDependencies ?? [])].sort());
    });

    it('declares every package its shipped sources load at run time (a dev dependency does not count)', () => {
      const declared = new Set([
        ...Object.keys(m.dependencies ?? {}),
        ...Object.keys(m.peerDependencies ?? {}),
      ]);
      const undeclared = [...imports.runtime]
        .filter(([name]) => name !== pin.name && !declared.has(name))
        .map(([name, files]) => `${name} (imported by ${files.join(', ')})`);
      expect(undeclared).toEqual([]);
    });

    it('imports every dependency it declares', () => {
      const used = new Set([...imports.runtime.keys(), ...imports.typeOnly]);
      const allowed = DECLARED_WITHOUT_IMPORT[pin.name] ?? {};
      const unused = Object.keys(m.dependencies ?? {}).filter((d) => !used.has(d) && !(d in allowed));
      expect(unused).toEqual([]);
    });

    it('depends only on conch packages of a lower layer (faces → mcp → service → drivers → core)', () => {
      const upward = Object.keys(m.dependencies ?? {})
        .filter((d) => conchNames.has(d))
        .filter((d) => (layerOf.get(d) ?? 0) >= pin.layer);
      expect(upward).toEqual([]);
    });

    it("re-exports no other package's symbols", () => {
      expect(imports.reexports).toEqual([]);
    });
  });
}
