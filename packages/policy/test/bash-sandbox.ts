import { chmodSync, chownSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throwaway directories in which the policy tests run commands with real bash. As root, the commands run
 * as nobody, so that a mistake in a test cannot reach beyond its directory.
 */

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** A fresh directory for the commands of one test file (reachable, not listable, by nobody). */
export function makeSandboxRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) chmodSync(root, 0o711);
  return root;
}

/** Gives `paths` to nobody when the tests run as root (nobody then runs the commands there). */
export function giveToNobody(paths: readonly string[]): void {
  if (asRoot) for (const p of paths) chownSync(p, NOBODY, NOBODY);
}

/** `spawn` options that run bash as nobody when the tests run as root. */
export const RUN_AS_NOBODY: { uid?: number; gid?: number } = asRoot ? { uid: NOBODY, gid: NOBODY } : {};
