// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text.
import { describe, expect, it } from 'vitest';
import { Policy } from './policy.js';
import { COMMAND_RUNNERS, type CommandRunner } from './programs.js';

const denyRm = new Policy({ deny: ['rm'] });
const allowGitLs = new Policy({ allow: ['git', 'ls'] });

/** A command that makes the wrapper run `rm victim`, built from its table entry. */
function wrapping(name: string, spec: CommandRunner): string {
  if (spec.addressPrefixes !== undefined) return `${name} - 'SYSTEM:rm victim'`;
  const option = spec.commandStringOptions?.[0];
  if (spec.tcl) return `${name} ${option} 'spawn rm victim'`;
  if (option !== undefined && spec.valuePrefixes !== undefined) return `${name} ${option} '!rm victim'`;
  if (spec.everyWord && spec.after !== undefined) return `${name} x ${spec.after} rm victim`;
  if (spec.everyWord) return `${name} rm victim`;
  if (option !== undefined) return `${name} ${option} 'rm victim'`;
  throw new Error(`no way to reach the command of ${name}`);
}

describe('wrappers (one table): each entry is checked as the command it runs', () => {
  it.each([...COMMAND_RUNNERS].map(([name, spec]) => [wrapping(name, spec)] as const))('%s', (command) => {
    const d = denyRm.evaluate(command);
    expect(d.decision).toBe('deny');
    expect(d.commands.some((c) => c.rule === 'deny rm')).toBe(true);
  });

  it.each([
    ['start-stop-daemon -S --exec=/bin/rm -- victim'],
    ['su -s /bin/rm root'],
    ['runuser -u root rm victim'],
    ['capsh --shell=/bin/rm --'],
    ['gdb -batch -ex "pipe info | rm victim"'],
    ['xterm -e "rm victim"'],
    ["bash /dev/stdin <<< 'rm victim'"],
    ["bash /proc/self/fd/0 <<< 'rm victim'"],
  ])('%s', (command) => expect(denyRm.evaluate(command).decision).toBe('deny'));

  it('a wrapper without a denied word stays allowed under "deny rm"', () => {
    expect(denyRm.evaluate('tmux new -d ls').decision).toBe('allow');
    expect(denyRm.evaluate('ip link set dev "$IF" up').decision).toBe('allow');
    expect(denyRm.evaluate('uv pip install rm').decision).toBe('allow');
    expect(denyRm.evaluate('ip netns exec x rm victim').decision).toBe('deny');
    expect(denyRm.evaluate('gdb -batch -ex "info registers" ./a.out').decision).toBe('allow');
  });
});

describe('arithmetic contexts: quoted substitution syntax is denied', () => {
  it.each([
    "[[ 'a[$(rm victim)]' -eq 0 ]]",
    "[[ 0 -lt 'a[`rm victim`]' ]]",
    "[[ -v 'a[$(rm victim)]' ]]",
    "ls $(( 'a[$(rm victim)]' ))",
    "echo $(( 'a[$(rm victim)]' ))",
    "for ((i='a[$(rm victim)]';0;)); do :; done",
    "(( x = 'a[$(rm victim)]' ))",
  ])('%s', (command) => {
    for (const p of [denyRm, allowGitLs]) {
      const d = p.evaluate(command);
      expect(d.decision).toBe('deny');
      expect(d.commands.some((c) => c.rule === 'policy:arithmetic-injection')).toBe(true);
    }
  });

  it('plain arithmetic and [[ ]] comparisons stay allowed', () => {
    expect(denyRm.evaluate('echo $(( 1 + 2 )); [[ 3 -eq 3 ]]; (( x = y * 2 ))').decision).toBe('allow');
    expect(denyRm.evaluate('[[ "$a" == "$(date)" ]]').decision).toBe('allow');
  });
});

describe('input nested past the parser depth limit', () => {
  it('is a deny decision naming the limit, not an error', () => {
    const command = `${'$('.repeat(300)}ls${')'.repeat(300)}`;
    for (const p of [denyRm, allowGitLs]) {
      const d = p.evaluate(command);
      expect(d.decision).toBe('deny');
      expect(d.commands[0]?.rule).toBe('policy:too-deep');
      expect(d.reason).toContain('100 deep');
    }
  });

  it('nesting within the limit is parsed as usual', () => {
    expect(denyRm.evaluate(`echo ${'$(echo '.repeat(20)}$(rm x)${')'.repeat(20)}`).decision).toBe('deny');
    expect(denyRm.evaluate(`echo ${'$(echo '.repeat(20)}hi${')'.repeat(20)}`).decision).toBe('allow');
  });
});

describe('output redirection to files under an allow list', () => {
  it.each(['ls > f', 'ls >| ~/.bashrc', 'ls >> f', 'ls &> f', 'git status >& f', 'ls <> f', '{ ls; } > f'])(
    '%s is denied',
    (command) => {
      const d = allowGitLs.evaluate(command);
      expect(d.decision).toBe('deny');
      expect(d.commands.some((c) => c.rule === 'policy:redirect-to-file')).toBe(true);
    },
  );

  it.each(['ls > /dev/null', 'ls 2>/dev/stderr', 'ls >/dev/stdout 2>&1', 'ls 2>&-', 'ls >/dev/fd/2'])(
    '%s is allowed',
    (command) => expect(allowGitLs.evaluate(command).decision).toBe('allow'),
  );

  it('is allowed by the rule ">", and never denied by a deny list alone', () => {
    expect(new Policy({ allow: ['ls', '>'] }).evaluate('ls > f').decision).toBe('allow');
    expect(denyRm.evaluate('ls > f').decision).toBe('allow');
  });
});

describe('deny rules match program names in any case', () => {
  it.each(['RM victim', 'Rm victim', '/bin/RM victim', 'sudo rM victim'])('%s', (command) =>
    expect(denyRm.evaluate(command).decision).toBe('deny'),
  );
  it('allow rules stay exact', () => expect(allowGitLs.evaluate('LS').decision).toBe('deny'));
});
