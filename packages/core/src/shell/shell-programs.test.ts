import { describe, expect, it } from 'vitest';
import { isKnownShell, isShellName, runsTypedCommands } from './shell-programs.js';

describe('the one list of shells', () => {
  it.each(['bash', 'rbash', 'tcsh', 'csh', 'yash', 'posh', '-bash', '/usr/bin/zsh', 'zsh-5.9'])(
    '%s is a shell',
    (name) => expect(isShellName(name)).toBe(true),
  );
  it.each(['script', 'tmux', 'screen', 'ssh', 'su', 'busybox', 'bash'])('%s runs typed commands', (name) =>
    expect(runsTypedCommands(name)).toBe(true),
  );
  it.each(['python3', 'vim', 'less', 'cat', 'sudo', ''])('%s does not', (name) =>
    expect(runsTypedCommands(name)).toBe(false),
  );
  it('known shells: names and system paths only', () => {
    expect(isKnownShell('bash')).toBe(true);
    expect(isKnownShell('/bin/zsh')).toBe(true);
    expect(isKnownShell('/usr/local/bin/fish')).toBe(true);
    expect(isKnownShell('/tmp/evil.sh')).toBe(false);
    expect(isKnownShell('/tmp/bash')).toBe(false);
    expect(isKnownShell('5')).toBe(false);
    expect(isKnownShell('python3')).toBe(false);
  });
});
