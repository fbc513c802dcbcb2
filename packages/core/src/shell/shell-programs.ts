/**
 * The one list of shells and of programs that run commands typed at them. The policy parses `-c` strings
 * and fed scripts of {@link SHELL_PROGRAMS}; the engine checks text typed into any of
 * {@link COMMAND_READERS} like `execute`; `create_local` accepts only shells from here under a policy.
 */

/** Shells: a string given to them with `-c`, or text fed to their input, is run as commands. */
export const SHELL_PROGRAMS: ReadonlySet<string> = new Set([
  'bash',
  'rbash',
  'sh',
  'zsh',
  'dash',
  'ksh',
  'ksh93',
  'mksh',
  'pdksh',
  'oksh',
  'lksh',
  'ash',
  'hush',
  'yash',
  'posh',
  'fish',
  'tcsh',
  'csh',
]);

/**
 * Programs that run commands typed at them when they are in a terminal's foreground: the shells, and
 * programs that relay what is typed to a shell (`script`, terminal multiplexers, `su`, remote shells).
 */
export const COMMAND_READERS: ReadonlySet<string> = new Set([
  ...SHELL_PROGRAMS,
  'busybox',
  'toybox',
  'script',
  'tmux',
  'screen',
  'byobu',
  'dtach',
  'abduco',
  'ssh',
  'mosh-client',
  'telnet',
  'rsh',
  'su',
  'login',
  'newgrp',
]);

/** The base name of a program as a host's process table names it (`-bash` for a login shell, `/usr/bin/zsh`, `zsh-5.9`). */
export function programBaseName(argv0: string): string {
  let name = argv0.trim();
  if (name.startsWith('-')) name = name.slice(1);
  const slash = name.lastIndexOf('/');
  if (slash >= 0) name = name.slice(slash + 1);
  return name;
}

/** True when `argv0` names a shell of {@link SHELL_PROGRAMS} (a versioned name such as `zsh-5.9` too). */
export function isShellName(argv0: string): boolean {
  const base = programBaseName(argv0);
  return SHELL_PROGRAMS.has(base) || SHELL_PROGRAMS.has(base.replace(/[-.]?[0-9][0-9.]*$/, ''));
}

/** True when `argv0` names a program of {@link COMMAND_READERS}: text typed into it may run as commands. */
export function runsTypedCommands(argv0: string): boolean {
  const base = programBaseName(argv0);
  return COMMAND_READERS.has(base) || isShellName(base);
}

/** Directories whose shells `create_local` accepts by path under a policy. */
const SYSTEM_SHELL_DIRS: ReadonlySet<string> = new Set([
  '/bin',
  '/usr/bin',
  '/usr/local/bin',
  '/sbin',
  '/usr/sbin',
  '/opt/homebrew/bin',
  '/run/current-system/sw/bin',
]);

/**
 * Whether `shell` is a known shell: a bare name from {@link SHELL_PROGRAMS}, or such a shell in a system
 * directory (`/bin/bash`, `/usr/local/bin/zsh`). Anything else could be any program or script.
 */
export function isKnownShell(shell: string): boolean {
  if (!shell.includes('/')) return SHELL_PROGRAMS.has(shell);
  const slash = shell.lastIndexOf('/');
  return SYSTEM_SHELL_DIRS.has(shell.slice(0, slash)) && SHELL_PROGRAMS.has(shell.slice(slash + 1));
}
