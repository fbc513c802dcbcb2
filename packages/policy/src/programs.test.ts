import { describe, expect, it } from 'vitest';
import { isInterpreterProgram, isProtectedVariable, isShellProgram } from './programs.js';

describe('isShellProgram', () => {
  it.each([
    'bash',
    'sh',
    'zsh',
    'dash',
    'fish',
    'ksh',
    'ssh',
    '/bin/bash',
    '-bash',
    '/usr/bin/zsh',
    'busybox',
  ])('%s reads commands', (argv0) => expect(isShellProgram(argv0)).toBe(true));
  it.each(['vim', 'less', 'python3', 'git', 'bash-completion', ''])('%s is not a shell', (argv0) =>
    expect(isShellProgram(argv0)).toBe(false),
  );
});

describe('isInterpreterProgram', () => {
  it('knows REPLs', () => {
    expect(isInterpreterProgram('python3.12')).toBe(true);
    expect(isInterpreterProgram('/usr/bin/node')).toBe(true);
    expect(isInterpreterProgram('psql')).toBe(true);
    expect(isInterpreterProgram('bash')).toBe(false);
  });
});

describe('isProtectedVariable', () => {
  it.each([
    'PATH',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'BASH_ENV',
    'ENV',
    'IFS',
    'PROMPT_COMMAND',
    'PS0',
    'PS4',
    'SHELLOPTS',
    'BASHOPTS',
    'GIT_PAGER',
    'GIT_SSH_COMMAND',
    'BASH_FUNC_ls%%',
  ])('%s is protected', (name) => expect(isProtectedVariable(name)).toBe(true));
  it.each(['FOO', 'PATHS', 'MYPATH', 'LANG', 'CI', 'NODE_ENV'])('%s is not', (name) =>
    expect(isProtectedVariable(name)).toBe(false),
  );
});
