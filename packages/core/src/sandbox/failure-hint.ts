/**
 * Whether a failed command failed because of its sandbox, and what to tell the agent: the one place that
 * decides it (docs/sandbox.md "When the sandbox says no"). The evidence is what the program printed: the
 * kernel's refusal of a write outside the writable paths (EROFS, "Read-only file system"; EACCES/EPERM on
 * such a path), a path under `deny_read` that looks missing or empty, or a failed connection, name lookup
 * or proxy refusal where the network is closed or limited to some hosts. The command's exit code is never
 * changed; the hint is added beside it.
 */

import { describeSandboxNetwork, isWithin, normalizePath, type SandboxRules } from './rules.js';

/** Most characters of output looked at (the end of it: errors come last). */
const SCAN_CHARS = 64 * 1024;

const READ_ONLY = /read-only file system|\bEROFS\b/i;
const DENIED = /permission denied|operation not permitted|\bEACCES\b|\bEPERM\b/i;
const MISSING = /no such file or directory|\bENOENT\b|not a directory|\bENOTDIR\b/i;
const NETWORK =
  /could not resolve host|temporary failure in name resolution|name or service not known|network is unreachable|connection refused|couldn't connect to server|failed to establish a new connection|\bE(?:NOTFOUND|AI_AGAIN|CONNREFUSED|NETUNREACH)\b|no address associated with hostname/i;
const PROXY_REFUSED = /CONNECT tunnel failed|conch sandbox: host|response 403|403 Forbidden/i;

/**
 * The paths named on an error line: quoted ('…', "…", ‘…’, `…'), or bare before the error's colon
 * (`bash: x: Read-only file system`); a relative one is taken relative to `cwd` (where the command ended).
 */
function pathsOn(line: string, cwd: string | undefined): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/['"‘`]([^'"’`\n]+)['"’`]/g)) if (m[1]) out.push(m[1]);
  for (const m of line.matchAll(/(?:^|\s)([^\s:'"]+): [A-Z]/g)) if (m[1]) out.push(m[1]);
  const paths: string[] = [];
  for (const p of out) {
    if (p.startsWith('/')) paths.push(normalizePath(p));
    else if (cwd !== undefined && /^[\w.~+-][^\s]*$/.test(p)) paths.push(normalizePath(`${cwd}/${p}`));
  }
  return paths;
}

/** `write` in words, with the private /tmp. */
function writable(rules: SandboxRules): string {
  return [...rules.write, '/tmp (private; $TMPDIR)'].join(', ');
}

/**
 * The hint for a command that ended with `exitCode` after printing `output` in a sandbox with `rules`
 * (relative paths in the output are taken relative to `cwd`), or undefined when nothing says the sandbox
 * caused the failure.
 */
export function sandboxFailureHint(
  rules: SandboxRules,
  output: string,
  exitCode: number | null | undefined,
  cwd?: string,
): string | undefined {
  if (exitCode === 0) return undefined;
  const text = output.length > SCAN_CHARS ? output.slice(-SCAN_CHARS) : output;
  const lines = text.split(/\r?\n/);
  for (const line of lines) {
    const readOnly = READ_ONLY.test(line);
    if (!readOnly && !DENIED.test(line) && !MISSING.test(line)) continue;
    for (const path of pathsOn(line, cwd)) {
      const hidden = rules.deny_read.find((d) => isWithin(path, d));
      if (hidden !== undefined) {
        return `${path} is unreadable in the sandbox (deny_read: ${hidden}); it looks empty or missing there.`;
      }
      if (
        (readOnly || DENIED.test(line)) &&
        !rules.write.some((w) => isWithin(path, w)) &&
        !isWithin(path, '/tmp')
      ) {
        return `${path} is outside the sandbox's writable paths: ${writable(rules)}.`;
      }
    }
    if (readOnly)
      return `A write outside the sandbox's writable paths was refused; writable: ${writable(rules)}.`;
  }
  if (rules.network === 'all') return undefined;
  for (const line of lines) {
    if (rules.network === 'none' && NETWORK.test(line)) {
      return 'The sandbox has no network (network: none); ask for a session with network access if the command needs it.';
    }
    if (rules.network !== 'none' && (NETWORK.test(line) || PROXY_REFUSED.test(line))) {
      return `The sandbox's network reaches only ${describeSandboxNetwork(rules.network)}, through its proxy ($HTTPS_PROXY, $HTTP_PROXY, $ALL_PROXY): a program that ignores the proxy reaches nothing.`;
    }
  }
  return undefined;
}
