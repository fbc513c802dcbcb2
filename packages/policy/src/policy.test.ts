import { ConchError, ErrorCode } from '@conch/core';
import { describe, expect, it } from 'vitest';
import { createPolicy, evaluate, Policy, policyDeniedError } from './policy.js';

const decide = (config: unknown, command: string) => new Policy(config).evaluate(command).decision;

describe('Policy.evaluate: the decision shape (docs/policy.md)', () => {
  it('returns exactly { decision, reason, commands: [{ text, argv, decision, rule? }] }', () => {
    const d = new Policy({ allow: ['git', 'ls'] }).evaluate('git status && ls -la | grep foo');
    expect(Object.keys(d).sort()).toEqual(['commands', 'decision', 'reason']);
    expect(d.decision).toBe('deny');
    expect(d.commands).toEqual([
      { text: 'git status', argv: ['git', 'status'], decision: 'allow', rule: 'allow git' },
      { text: 'ls -la', argv: ['ls', '-la'], decision: 'allow', rule: 'allow ls' },
      { text: 'grep foo', argv: ['grep', 'foo'], decision: 'deny', rule: 'policy:no-allow-rule' },
    ]);
    expect(d.reason).toBe('Denied: "grep foo" matches no allow rule (allowed: git, ls).');
  });

  it('names the rule and the sub-command of a denial', () => {
    const d = new Policy({ deny: ['rm'] }).evaluate('cd build && sudo -u root /bin/rm -rf x');
    expect(d.decision).toBe('deny');
    expect(d.reason).toContain('"/bin/rm -rf x" (run by sudo) matches the deny rule "rm"');
    expect(d.commands.find((c) => c.decision === 'deny')).toEqual({
      text: '/bin/rm -rf x',
      argv: ['rm', '-rf', 'x'],
      decision: 'deny',
      rule: 'deny rm',
    });
  });

  it('normalises argv: quotes removed, system paths stripped, dynamic words as written', () => {
    const d = new Policy({ deny: ['x'] }).evaluate(`"l"s '-la' /usr/bin/../bin/git $HOME "$(pwd)"`);
    expect(d.commands[0]?.argv).toEqual(['ls', '-la', '/usr/bin/../bin/git', '$HOME', '"$(pwd)"']);
  });

  it('says when nothing is configured, and still lists the commands', () => {
    const d = new Policy({}).evaluate('rm -rf x; f() { :; }');
    expect(d.decision).toBe('allow');
    expect(d.reason).toContain('No policy rules are configured');
    expect(d.commands.map((c) => [c.text, c.decision])).toEqual([
      ['rm -rf x', 'allow'],
      ['f() { :; }', 'allow'],
      [':', 'allow'],
    ]);
    expect(new Policy({}).active).toBe(false);
    expect(new Policy({}).evaluate('ls\0x').decision).toBe('allow');
    expect(new Policy({}).evaluate('ls )').decision).toBe('allow');
  });

  it('denies what the raw-text gate refuses, when any rule exists', () => {
    const d = new Policy({ deny: ['rm'] }).evaluate('ls\rrm x');
    expect(d.decision).toBe('deny');
    expect(d.commands).toEqual([
      { text: 'ls\rrm x', argv: [], decision: 'deny', rule: 'policy:control-character' },
    ]);
    expect(d.reason).toContain('carriage return');
  });

  it('allows an empty input', () => {
    expect(new Policy({ allow: ['git'] }).evaluate('  \n# just a comment\n')).toEqual({
      decision: 'allow',
      reason: 'Allowed: the input contains no command.',
      commands: [],
    });
  });

  it('checks history expansion unless told the text cannot be history-expanded', () => {
    expect(new Policy({ deny: ['rm'] }).evaluate('echo hi!x').decision).toBe('deny');
    expect(new Policy({ deny: ['rm'] }).evaluate('echo hi!x', { historyExpansion: false }).decision).toBe(
      'allow',
    );
    expect(new Policy({ deny: ['rm'] }, { historyExpansion: false }).evaluate('echo hi!x').decision).toBe(
      'allow',
    );
    expect(
      new Policy({ deny: ['rm'] }, { historyExpansion: false }).evaluate('echo !!', {
        historyExpansion: true,
      }).decision,
    ).toBe('deny');
  });

  it('treats typed input more strictly (TAB completes)', () => {
    const p = new Policy({ deny: ['rm'] });
    expect(p.evaluate('ls\t-la').decision).toBe('allow');
    expect(p.evaluate('ls\t-la', { typed: true }).decision).toBe('deny');
  });
});

describe('Policy rules', () => {
  it('matches whole words of the normalised argv', () => {
    const p = { deny: ['git push'] };
    expect(decide(p, 'git push origin main')).toBe('deny');
    expect(decide(p, 'git push')).toBe('deny');
    expect(decide(p, 'gitpush')).toBe('allow');
    expect(decide({ deny: ['ls -l'] }, 'ls -la')).toBe('allow');
    expect(decide({ deny: ['ls -l'] }, 'ls -l -a')).toBe('deny');
    expect(decide(p, 'git pull')).toBe('allow');
    expect(decide(p, '"git" \'push\'')).toBe('deny');
    expect(decide(p, 'git -C x push')).toBe('allow'); // prefix rules are prefixes
  });

  it('lets deny beat allow', () => {
    const p = { allow: ['git'], deny: ['git push'] };
    expect(decide(p, 'git status')).toBe('allow');
    expect(decide(p, 'git push')).toBe('deny');
  });

  it('requires every simple command to match the allow list', () => {
    const p = { allow: ['git', 'ls'] };
    expect(decide(p, 'git status; ls')).toBe('allow');
    expect(decide(p, 'git status; cat x')).toBe('deny');
    expect(decide(p, 'ls $(cat x)')).toBe('deny');
  });

  it('treats a word only known at run time as matching any deny rule word, and no allow rule word', () => {
    expect(decide({ deny: ['git push --force'] }, 'git push "$FLAG"')).toBe('deny');
    expect(decide({ deny: ['docker push --force'] }, 'docker push origin "$B"')).toBe('allow');
    expect(decide({ deny: ['docker push --force'] }, 'docker push "$B"')).toBe('deny');
    expect(decide({ allow: ['git status'] }, 'git $X')).toBe('deny');
    expect(decide({ allow: ['ls'] }, 'ls "$X"')).toBe('allow');
    expect(decide({ deny: ['rm -rf'] }, 'echo x | xargs rm')).toBe('deny'); // xargs appends arguments
  });

  it('denies a dynamic command name under an allow list and under a deny list', () => {
    expect(decide({ allow: ['ls'] }, '$CMD x')).toBe('deny');
    expect(decide({ deny: ['rm'] }, '$CMD x')).toBe('deny');
    expect(decide({ deny: ['rm'] }, 'eval "$X"')).toBe('deny');
    expect(decide({ deny: ['rm'] }, '. "$file"')).toBe('deny');
    expect(decide({ allow: ['*'] }, '$CMD')).toBe('deny');
  });

  it('denies unparseable input whenever a rule exists', () => {
    expect(decide({ allow: ['ls'] }, 'ls )')).toBe('deny');
    expect(decide({ deny: ['rm'] }, 'ls "')).toBe('deny');
  });

  it('keeps a path for allow rules unless the program is in a system directory', () => {
    expect(decide({ allow: ['ls'] }, '/bin/ls')).toBe('allow');
    expect(decide({ allow: ['ls'] }, '/usr/local/bin/ls')).toBe('allow');
    expect(decide({ allow: ['ls'] }, './ls')).toBe('deny');
    expect(decide({ allow: ['ls'] }, '/tmp/x/ls')).toBe('deny');
    expect(decide({ allow: ['./build.sh'] }, './build.sh --fast')).toBe('allow');
    expect(decide({ allow: ['./build.sh'] }, 'build.sh')).toBe('deny');
    expect(decide({ deny: ['rm'] }, './rm x')).toBe('deny');
    expect(decide({ deny: ['rm'] }, '/opt/x/rm x')).toBe('deny');
  });

  it('"*" matches every command with a static name', () => {
    expect(decide({ allow: ['*'], deny: ['rm'] }, 'anything at all')).toBe('allow');
    expect(decide({ allow: ['*'], deny: ['rm'] }, 'rm x')).toBe('deny');
    expect(decide({ deny: ['*'] }, 'ls')).toBe('deny');
  });

  it('needs no allow rule for transparent wrappers, but does for sudo, doas and ssh', () => {
    expect(decide({ allow: ['make'] }, 'timeout 60 nice make -j4')).toBe('allow');
    expect(decide({ allow: ['make'] }, "bash -c 'make all'")).toBe('allow');
    expect(decide({ allow: ['make'] }, 'env CC=clang make')).toBe('allow');
    expect(decide({ allow: ['make'] }, 'sudo make install')).toBe('deny');
    expect(decide({ allow: ['make', 'sudo'] }, 'sudo make install')).toBe('allow');
    expect(decide({ allow: ['make', 'sudo'] }, 'sudo rm x')).toBe('deny');
    expect(decide({ allow: ['uptime'] }, 'ssh host uptime')).toBe('deny');
    expect(decide({ allow: ['uptime', 'ssh'] }, 'ssh host uptime')).toBe('allow');
    expect(decide({ allow: ['ls'] }, 'bash')).toBe('deny');
    expect(decide({ allow: ['bash'] }, 'bash')).toBe('allow');
  });

  it('lets an allow rule that reaches into the wrapped command cover it', () => {
    const p = { allow: ['timeout 5 make'] };
    expect(decide(p, 'timeout 5 make all')).toBe('allow');
    expect(decide(p, 'timeout 5 rm x')).toBe('deny');
    expect(decide({ allow: ['sudo apt'] }, 'sudo apt install x')).toBe('allow');
    expect(decide({ allow: ['sudo apt'] }, 'sudo rm x')).toBe('deny');
  });

  it('denies text piped into a shell under an allow list, and checks it under a deny list', () => {
    expect(decide({ allow: ['echo', 'ls', 'sh'] }, 'echo ls | sh')).toBe('deny');
    expect(decide({ deny: ['rm'] }, 'echo ls | sh')).toBe('allow');
    expect(decide({ deny: ['rm'] }, 'echo rm x | sh')).toBe('deny');
    const d = new Policy({ deny: ['rm'] }).evaluate("printf 'cat >/dev/null\\nxrm x\\n' | sh");
    expect(d.decision).toBe('deny');
    expect(d.reason).toContain('if its own commands read part of it');
  });

  it('denies state changes and interpreters in disguise under any rule, unless explicitly allowed', () => {
    for (const c of [
      'f() { :; }',
      'alias a=b',
      "trap 'x' EXIT",
      'source x',
      'PATH=. ls',
      'git -c a=b log',
      'find . -delete',
    ]) {
      expect(decide({ deny: ['nothing-matches-this'] }, c), c).toBe('deny');
    }
    expect(decide({ allow: ['git'] }, 'git -c user.name=x commit')).toBe('deny');
    expect(decide({ allow: ['git', 'git -c'] }, 'git -c user.name=x commit')).toBe('allow');
    expect(decide({ allow: ['git -c'] }, 'git -c user.name=x commit')).toBe('allow');
    expect(decide({ allow: ['git'] }, 'git diff --output=x')).toBe('deny');
    expect(decide({ allow: ['git', 'git diff --output'] }, 'git diff --output=x')).toBe('allow');
    expect(decide({ allow: ['git'] }, 'git co main')).toBe('deny');
    expect(decide({ allow: ['git', 'git co'] }, 'git co main')).toBe('allow');
    expect(decide({ allow: ['find'] }, 'find . -name x -exec grep y {} +')).toBe('deny');
    expect(decide({ allow: ['find -exec', 'grep'] }, 'find . -name x -exec grep y {} +')).toBe('deny');
    expect(decide({ allow: ['find', 'find -exec', 'grep'] }, 'find . -name x -exec grep y {} +')).toBe(
      'allow',
    );
    expect(decide({ allow: ['find -exec'] }, 'find . -exec rm {} +')).toBe('deny');
    expect(decide({ allow: ['*', 'git -c'], deny: ['rm'] }, 'git -c a=b status')).toBe('allow');
  });
});

describe('rule examples', () => {
  it('accepts rules whose examples hold', () => {
    expect(
      () =>
        new Policy({
          allow: [
            {
              prefix: 'git push',
              match: ['git push origin main', 'git push'],
              not_match: ['git pull', 'gitpush'],
            },
          ],
          deny: [{ prefix: 'rm', match: ['ls; rm -rf x', 'sudo rm x'], not_match: ['rmdir x', 'echo rm'] }],
        }),
    ).not.toThrow();
  });

  it('throws a startup error naming the rule and the failing example', () => {
    const bad = () => new Policy({ allow: [{ prefix: 'git push', match: ['git pull'] }] });
    expect(bad).toThrow(ConchError);
    expect(bad).toThrow(/allow rule "git push": the example "git pull" in match fails/);
    try {
      bad();
    } catch (e) {
      expect(ConchError.is(e) && e.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(ConchError.is(e) && e.data).toMatchObject({
        rule: 'git push',
        example: 'git pull',
        list: 'match',
      });
    }
    expect(() => new Policy({ deny: [{ prefix: 'rm', not_match: ['command rm x'] }] })).toThrow(
      /deny rule "rm": the example "command rm x" in not_match fails/,
    );
    expect(() => new Policy({ deny: [{ prefix: 'rm -rf', match: ['rm -r x'] }] })).toThrow(/does not match/);
  });

  it('rejects rules that are not command prefixes', () => {
    for (const rule of ['ls; rm', 'a | b', 'git $X', '> f', 'A=1 ls', '', 'ls &', "'unterminated"]) {
      expect(() => new Policy({ allow: [rule] }), rule).toThrow(ConchError);
    }
    expect(() => new Policy({ allow: ['ls; rm'] })).toThrow(/Invalid allow rule "ls; rm"/);
    expect(() => new Policy({ allow: [42] })).toThrow(/Invalid policy configuration/);
    expect(() => new Policy({ allowed: ['ls'] })).toThrow(/Invalid policy configuration/);
  });
});

describe('evaluate, createPolicy, policyDeniedError', () => {
  it('evaluate accepts a compiled policy or a configuration', () => {
    expect(evaluate('rm x', { allow: [], deny: ['rm'] }).decision).toBe('deny');
    expect(evaluate('rm x', createPolicy({ deny: ['ls'] })).decision).toBe('allow');
  });

  it('policyDeniedError is POLICY_DENIED and names the sub-command and the rule', () => {
    const d = new Policy({ deny: ['rm'] }).evaluate('ls && rm -f x');
    const e = policyDeniedError(d);
    expect(e.code).toBe(ErrorCode.POLICY_DENIED);
    expect(e.message).toBe('Denied by policy: "rm -f x" matches the deny rule "rm".');
    expect(e.data).toMatchObject({ command: 'rm -f x', rule: 'deny rm' });
    expect(() => new Policy({ deny: ['rm'] }).assertAllowed('rm x')).toThrow(/Denied by policy/);
    expect(new Policy({ deny: ['rm'] }).assertAllowed('ls').decision).toBe('allow');
  });
});
