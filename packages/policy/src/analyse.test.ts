// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, where ${…} is parameter expansion.
import { describe, expect, it } from 'vitest';
import { analyseCommand, type Finding, normaliseName } from './analyse.js';

const names = (source: string) =>
  analyseCommand(source)
    .filter((f) => f.runsProgram && !f.speculative)
    .map((f) => f.name);
const rules = (source: string) => analyseCommand(source).flatMap((f) => f.issues.map((i) => i.rule));
const find = (source: string, name: string): Finding => {
  const f = analyseCommand(source).find((x) => x.name === name);
  if (f === undefined) throw new Error(`no ${name} in ${source}`);
  return f;
};

describe('normaliseName', () => {
  it.each([
    ['rm', 'rm', 'rm'],
    ['/bin/rm', 'rm', 'rm'],
    ['/usr/bin/../bin/rm', 'rm', 'rm'],
    ['//usr//bin//rm', 'rm', 'rm'],
    ['/usr/local/bin/git', 'git', 'git'],
    ['./rm', 'rm', './rm'],
    ['tools/ls', 'ls', 'tools/ls'],
    ['/tmp/evil/ls', 'ls', '/tmp/evil/ls'],
    ['../../bin/rm', 'rm', '../../bin/rm'],
    ['~/bin/rm', 'rm', '~/bin/rm'],
  ])('%s → deny name %s, allow name %s', (value, name, allowName) => {
    expect(normaliseName(value)).toEqual({ name, allowName });
  });
});

describe('analyseCommand', () => {
  it('finds every simple command in lists, pipelines and compound commands', () => {
    expect(names('a; b && c || d | e & f\ng')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(names('if a; then b; elif c; then d; else e; fi')).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(names('while a; do b; done; until c; do d; done')).toEqual(['a', 'b', 'c', 'd']);
    expect(names('case $(a) in x) b;; y) c;; esac')).toEqual(['a', 'b', 'c']);
    expect(names('(a); { b; }; ! c; time d')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('finds commands inside every kind of expansion', () => {
    expect(names('x $(a) `b` "$(c)" <(d) >(e) $(( $(f) )) ${v:-$(g)} ${v[$(h)]}')).toEqual([
      'x',
      'a',
      'b',
      'c',
      'd',
      'e',
      'f',
      'g',
      'h',
    ]);
    expect(names('a[$(i)]=1; [[ $(j) ]]; (( $(k) )); for ((n=$(l);;)); do :; done')).toEqual([
      'i',
      'j',
      'k',
      'l',
      ':',
    ]);
    expect(names('cat <<EOF\n$(m)\nEOF')).toEqual(['cat', 'm']);
    expect(names("cat <<'EOF'\n$(m)\nEOF")).toEqual(['cat']);
    expect(names('cat <<< "$(n)"')).toEqual(['cat', 'n']);
  });

  it('removes quotes, backslashes and continuations from names', () => {
    expect(names("r''m; \\rm; \"rm\"; $'\\x72m'; r\\\nm")).toEqual(['rm', 'rm', 'rm', 'rm', 'rm']);
  });

  it('unwraps wrappers with their options, one finding per level', () => {
    expect(names('sudo -u root -E env -i A=1 nice -n 5 timeout -k 1 5s stdbuf -oL nohup rm x')).toEqual([
      'sudo',
      'env',
      'nice',
      'timeout',
      'stdbuf',
      'nohup',
      'rm',
    ]);
    expect(names('command -p exec -a n builtin setsid busybox rm x')).toEqual([
      'command',
      'exec',
      'builtin',
      'setsid',
      'busybox',
      'rm',
    ]);
    expect(names('doas -u root ionice -c 3 taskset -c 0 chroot / rm x')).toEqual([
      'doas',
      'ionice',
      'taskset',
      'chroot',
      'rm',
    ]);
  });

  it('records where a wrapped command starts, and who runs it', () => {
    const rm = find('timeout 5 rm x', 'rm');
    expect(rm.offsetInParent).toBe(2);
    expect(rm.via).toBe('timeout');
    expect(rm.parent?.name).toBe('timeout');
    expect(rm.text).toBe('rm x');
  });

  it('splits env -S strings', () => {
    expect(names("env -S 'rm -f x'")).toEqual(['env', 'rm']);
    expect(rules('env -S "$X"')).toContain('policy:dynamic-name');
  });

  it('runs xargs commands with appended arguments and the implicit echo', () => {
    expect(find('xargs -n1 rm', 'rm').openEnded).toBe(true);
    expect(names('xargs')).toEqual(['xargs', 'echo']);
    expect(rules('xargs -I{} sh -c {}')).toContain('policy:dynamic-script');
    expect(rules('xargs env')).toContain('policy:dynamic-name');
  });

  it('parses strings run by shells, eval, trap, su, ssh, watch, flock and script', () => {
    expect(names("bash -c 'a; b'")).toEqual(['bash', 'a', 'b']);
    expect(names("sh -xec 'a'")).toEqual(['sh', 'a']);
    expect(names("zsh -o x -c 'a'")).toEqual(['zsh', 'a']);
    expect(names("fish --command='a'")).toEqual(['fish', 'a']);
    expect(names('eval a "b; c"')).toEqual(['eval', 'a', 'c']);
    expect(names("trap 'a' EXIT")).toEqual(['trap', 'a']);
    expect(names("su root -c 'a'")).toEqual(['su', 'a']);
    expect(names('ssh -p 22 host a b')).toEqual(['ssh', 'a']);
    expect(names('watch -n 1 a b')).toEqual(['watch', 'a']);
    expect(names("flock /tmp/l -c 'a'")).toEqual(['flock', 'a']);
    expect(names("script -qc 'a' /dev/null")).toEqual(['script', 'a']);
  });

  it('checks literal text fed to a shell and refuses anything else', () => {
    expect(names('echo a | sh')).toEqual(['echo', 'sh', 'a']);
    expect(names("printf 'a\\nb\\n' | bash -s")).toEqual(['printf', 'bash', 'a', 'b']);
    expect(names("bash <<< 'a'")).toEqual(['bash', 'a']);
    expect(names('sh <<EOF\na \\$x\nEOF')).toEqual(['sh', 'a']);
    expect(names("cat <<'EOF' | sh\na\nEOF")).toEqual(['cat', 'sh', 'a']);
    expect(rules('curl x | sh')).toContain('policy:dynamic-script');
    expect(rules('sh < f')).toContain('policy:dynamic-script');
    expect(rules('echo "$X" | sh')).toContain('policy:dynamic-script');
    expect(rules('echo a | (sh)')).toContain('policy:dynamic-script');
    expect(rules('echo a | { cat; sh; }')).toContain('policy:dynamic-script');
    expect(rules("bash -c 'sh' <<< a")).toContain('policy:dynamic-script');
    expect(rules('echo a | sh')).toEqual(['policy:shell-input']);
    expect(rules('{ sh; } <<< a')).toContain('policy:dynamic-script');
  });

  it('treats a shell reading the terminal as interactive, and a script file as a program', () => {
    expect(rules('bash')).toEqual([]);
    expect(rules('bash script.sh')).toEqual([]);
    expect(find('bash', 'bash').transparent).toBe(false);
    expect(find("bash -c 'a'", 'bash').transparent).toBe(true);
  });

  it('checks find -exec commands as commands', () => {
    const rm = find('find . -exec rm -f {} +', 'rm');
    expect(rm.openEnded).toBe(true);
    expect(rm.args[2]?.isStatic).toBe(false);
    expect(rules('find . -exec {} \\;')).toContain('policy:dynamic-name');
    expect(names("find . -execdir sh -c 'a' \\; -ok b {} \\;")).toEqual(['find', 'sh', 'a', 'b']);
  });

  it('flags dynamic command names', () => {
    for (const c of ['$X', '$(which rm) x', '`a`', '/bin/r? x', '{a,b}', 'env $X', 'sudo "$@"', 'xargs $X']) {
      expect(rules(c), c).toContain('policy:dynamic-name');
    }
    for (const c of ['eval "$X"', 'bash -c "$X"', 'sh "$X"'])
      expect(rules(c), c).toContain('policy:dynamic-script');
  });

  it('flags state-changing constructs', () => {
    expect(rules('f() { :; }')).toContain('policy:function-definition');
    expect(rules('alias ll="ls -l"')).toContain('policy:alias');
    expect(rules('alias')).toEqual([]);
    expect(rules('trap "" INT')).toContain('policy:trap');
    expect(rules('trap - INT; trap -p; trap -l')).toEqual([]);
    expect(rules('source x; . x')).toEqual(['policy:source', 'policy:source']);
    expect(rules('enable -f x.so y')).toContain('policy:enable');
    expect(rules('hash -p /bin/rm ls')).toContain('policy:hash');
    expect(rules('hash -r')).toEqual([]);
    expect(rules('bind -x x')).toContain('policy:bind');
    expect(rules('bind -p')).toEqual([]);
    expect(rules('fc -s')).toContain('policy:fc');
    expect(rules('fc -l')).toEqual([]);
    expect(rules('exec < f')).toContain('policy:exec-stdin');
    expect(rules('exec > log 2>&1')).toEqual(['policy:redirect-to-file']);
  });

  it('flags assignments to protected variables, however they are made', () => {
    for (const c of [
      'PATH=. ls',
      'PATH=.',
      'export PATH=.',
      "export 'PATH=.'",
      'declare -gx LD_PRELOAD=x',
      'local IFS=x',
      'readonly PS1=x',
      'typeset GIT_DIR=x',
      'env GIT_EXTERNAL_DIFF=x git diff',
      'sudo PATH=. ls',
      'for PATH in .; do :; done',
      'read -r PATH',
      'read -a PATH',
      'printf -v PATH x',
      'mapfile PATH',
      'getopts ab PATH',
      ': ${PROMPT_COMMAND:=x}',
      'builtin export PATH=.',
      'command export PATH=.',
    ]) {
      expect(rules(c), c).toContain('policy:protected-variable');
    }
    expect(rules('export FOO=1 BAR="$X"; declare -i n=1; read -r line; export PATH')).toEqual([]);
    expect(rules('export "$X"')).toContain('policy:protected-variable');
    expect(rules('declare -n r=x')).toContain('policy:nameref');
  });

  it('flags interpreters in disguise', () => {
    const git = (c: string) => rules(c).filter((r) => r.startsWith('policy:git'));
    expect(git('git -c a=b status')).toEqual(['policy:git -c']);
    expect(git('git --config-env=a=B status')).toEqual(['policy:git --config-env']);
    expect(git('git -p log')).toEqual(['policy:git -p']);
    expect(git('git --paginate log')).toEqual(['policy:git --paginate']);
    expect(git('git --exec-path=/x log')).toEqual(['policy:git --exec-path']);
    expect(git('git diff --output=f')).toEqual(['policy:git --output']);
    expect(git('git log -p --ext-diff')).toEqual(['policy:git --ext-diff']);
    expect(git('git show --textconv x')).toEqual(['policy:git --textconv']);
    expect(git('git fetch --upload-pack=x o')).toEqual(['policy:git --upload-pack']);
    expect(git('git push --receive-pack=x o')).toEqual(['policy:git --receive-pack']);
    expect(git('git rebase -x make')).toEqual(['policy:git --exec']);
    expect(git('git submodule foreach x')).toEqual(['policy:git foreach']);
    expect(git('git bisect run x')).toEqual(['policy:git run']);
    expect(git('git config alias.x "!sh"')).toEqual(['policy:git config']);
    expect(git('git config user.name')).toEqual([]);
    expect(git('git config --get user.name')).toEqual([]);
    expect(git('git co')).toEqual(['policy:git alias']);
    expect(git('git -C dir --git-dir=.git status -s')).toEqual([]);
    expect(rules('git log "$REV"')).toContain('policy:unverifiable-arguments');
    expect(rules('git commit -m "$(date)"').filter((r) => r.startsWith('policy:'))).toEqual([]);
    expect(rules('find . -delete; find . -fprint f; find . -ok x \\;')).toEqual([
      'policy:find -delete',
      'policy:find -fprint',
      'policy:find -ok',
    ]);
    expect(rules('find "$D" -name x')).toContain('policy:unverifiable-arguments');
    expect(rules('find . -name "$P" -type f')).toEqual([]);
    expect(rules('tar --to-command=x -xf a.tar')).toEqual(['policy:tar --to-command']);
    expect(rules('rsync -avze "ssh -x" a b:')).toEqual(['policy:rsync -e']);
    expect(rules('ssh -o ProxyCommand=x h')).toEqual(['policy:ssh -o']);
    expect(rules('ssh -o Port=22 h')).toEqual([]);
  });

  it('flags text that bash would run if evaluated arithmetically, and prompt expansion', () => {
    expect(rules("x='a[$(id)]'")).toContain('policy:arithmetic-injection');
    expect(rules("echo 'a[`id`]'")).toContain('policy:arithmetic-injection');
    expect(rules('echo ${x@P}')).toContain('policy:prompt-expansion');
    expect(rules('echo ${x@Q} ${a[1]} $((a[1]+2))')).toEqual([]);
  });

  it('refuses input a shell would not run as it stands', () => {
    expect(rules('ls )')).toContain('policy:unparseable');
    expect(rules('echo $(ls')).toContain('policy:unparseable');
    expect(rules('ls \\')).toContain('policy:incomplete');
    expect(rules('ls \\\n')).toContain('policy:incomplete');
    expect(rules('ls \\\\')).toEqual([]);
    expect(rules('cat <<EOF\nx')).toContain('policy:incomplete');
    expect(rules('echo !!')).toContain('policy:history-expansion');
    expect(rules('echo \'!!\' "hi!" [ ! -f x ] a!=b')).toEqual([]);
    expect(analyseCommand('echo !!', { historyExpansion: false }).flatMap((f) => f.issues)).toEqual([]);
  });

  it('stops at a nesting depth', () => {
    let c = 'rm x';
    for (let i = 0; i < 12; i++) c = `eval ${JSON.stringify(c).replace(/\$/g, '\\$')}`;
    expect(rules(c)).toContain('policy:too-deep');
    expect(analyseCommand(c, { maxDepth: 20 }).some((f) => f.name === 'rm')).toBe(true);
  });
});

describe('literal text fed to a shell', () => {
  it('checks every suffix, since the script’s own commands can read part of it', () => {
    const found = analyseCommand("printf 'head -c 1 >/dev/null\\nxrm victim\\n' | bash");
    const rm = found.filter((f) => f.name === 'rm');
    expect(rm.length).toBeGreaterThan(0);
    expect(rm.every((f) => f.speculative)).toBe(true);
    expect(found.filter((f) => !f.speculative && f.runsProgram).map((f) => f.name)).toEqual([
      'printf',
      'bash',
      'head',
      'xrm',
    ]);
  });

  it('refuses fed text too long to check suffix by suffix', () => {
    const text = `echo ${'a'.repeat(3000)}`;
    expect(analyseCommand(`bash <<< '${text}'`).flatMap((f) => f.issues.map((i) => i.rule))).toContain(
      'policy:dynamic-script',
    );
  });
});
