import { posix } from 'node:path';
import { SYSTEM_BIN_DIRS } from './programs.js';

/** Normalises a command name: `/usr/bin/../bin/rm` → `rm` (for both); `./x/rm` → `rm` and `x/rm`. */
export function normaliseName(value: string): { name: string; allowName: string } {
  if (!value.includes('/')) return { name: value, allowName: value };
  let norm = posix.normalize(value);
  if (norm.length > 1 && norm.endsWith('/')) norm = norm.slice(0, -1);
  const slash = norm.lastIndexOf('/');
  const name = slash >= 0 ? norm.slice(slash + 1) : norm;
  const dir = slash > 0 ? norm.slice(0, slash) : slash === 0 ? '/' : '';
  if (SYSTEM_BIN_DIRS.has(dir)) return { name, allowName: name };
  return { name, allowName: norm.includes('/') ? norm : `./${norm}` };
}
