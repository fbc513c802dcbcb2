/**
 * What every driver's session tests check of a shell other than a plain bash: a bash whose rc file fights
 * the shell integration, POSIX `sh` (dash) and zsh. Each test file starts the session its own way (a
 * local shell, a shell over SSH) and passes a `run` that executes a command in it.
 */
import { expect } from 'vitest';
import type { CommandResult } from '../types.js';

/** Executes `command` in the session under test. */
export type RunInSession = (command: string) => Promise<CommandResult>;

/**
 * A `.bashrc` that fights the shell integration: a prompt with escapes and a command substitution, a
 * PROMPT_COMMAND that prints and touches history, vi mode, HISTCONTROL and an alias.
 */
export const HOSTILE_BASHRC = [
  'PS1="\\[\\e[1;32m\\]\\u@\\h \\w \\$(echo dyn)\\[\\e[0m\\] $ "',
  'PROMPT_COMMAND="echo -n prompt-hook-ran; history -a"',
  'set -o vi',
  'HISTCONTROL=ignoreboth',
  'alias ll="echo ll-alias"',
].join('\n');

/**
 * Checks a bash session whose HOME has {@link HOSTILE_BASHRC} as `.bashrc`: output, aliases and exit codes
 * are exact, also after the command replaces PROMPT_COMMAND.
 */
export async function expectHostileBashrcSurvived(run: RunInSession): Promise<void> {
  expect((await run('echo one')).output).toBe('one');
  expect((await run('ll')).output).toBe('ll-alias');
  expect((await run('false')).exit_code).toBe(1);
  expect((await run('PROMPT_COMMAND="echo replaced"; echo two')).output).toBe('two');
  expect((await run('echo three')).output).toBe('three');
}

/** Checks a POSIX `sh` (dash) session: output, exit codes, the cwd after `cd`, a here-document. */
export async function expectPosixShWorks(run: RunInSession): Promise<void> {
  expect((await run('echo dash')).output).toBe('dash');
  expect((await run('cd /tmp && false')).exit_code).toBe(1);
  expect((await run('pwd')).output).toBe('/tmp');
  expect((await run('cat <<EOF\nin heredoc\nEOF')).output).toBe('in heredoc');
}

/** Checks a zsh session: it is zsh, exit codes, and the cwd and variables kept between commands. */
export async function expectZshWorks(run: RunInSession): Promise<void> {
  expect((await run('echo $ZSH_NAME')).output).toBe('zsh');
  expect((await run('(exit 4)')).exit_code).toBe(4);
  await run('cd /tmp; export Z=1');
  expect((await run('echo $PWD $Z')).output).toBe('/tmp 1');
}
