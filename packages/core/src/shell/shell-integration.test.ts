import { describe, expect, it } from 'vitest';
import { decodeAnsiC } from '../testing/fake-driver.js';
import {
  ansiCQuote,
  ISOLATED_JOB_LEADER,
  ISOLATED_NONCE_ENV,
  ISOLATED_SCRIPT_ENV,
  MAX_TYPED_LINE,
  ShellIntegration,
  shellKindOf,
  shellQuote,
  snapshotFile,
} from './shell-integration.js';

const NONCE = 'abcdefgh12345678';

describe('ShellIntegration', () => {
  const bash = new ShellIntegration('bash', NONCE);

  it('types a command as one printable line that evals a brace group', () => {
    const text = "cat <<'EOF'\nhello 'world' \\ !x\t\x1b[1m\nEOF";
    const enc = bash.encodeForeground('c_1', text);
    expect(enc.script).toBeUndefined();
    expect(enc.line).toMatch(/^ __conch_s c_1;eval \$'.*';__conch_e c_1$/s);
    expect(enc.line).toMatch(/^[\x20-\x7e]+$/);
    expect(enc.line).not.toContain('!');
    const quoted = /eval \$'(.*)';__conch_e/s.exec(enc.line)![1]!;
    expect(decodeAnsiC(quoted)).toBe(`{ ${text}\n}`);
  });

  it('round-trips UTF-8 through the quoting', () => {
    const q = ansiCQuote('héllo 日本 🐚');
    expect(q).toMatch(/^\$'[\x20-\x7e]*'$/);
    expect(decodeAnsiC(q.slice(2, -1))).toBe('héllo 日本 🐚');
  });

  it('puts a cd first when asked', () => {
    const enc = bash.encodeForeground('c_1', 'ls', "/tmp/it's");
    const quoted = /eval \$'(.*)';__conch_e/s.exec(enc.line)![1]!;
    expect(decodeAnsiC(quoted)).toBe(`cd -- '/tmp/it'\\''s' && { ls\n}`);
  });

  it('sends long input through a script file', () => {
    const enc = bash.encodeForeground('c_2', `echo ${'x'.repeat(MAX_TYPED_LINE)}`);
    expect(enc.script).toBe(`{ echo ${'x'.repeat(MAX_TYPED_LINE)}\n}\n`);
    expect(enc.line).toBe(' __conch_s c_2;. {{SCRIPT}};__conch_e c_2');
  });

  it('always uses a script for POSIX sh', () => {
    const sh = new ShellIntegration('sh', NONCE);
    expect(sh.encodeForeground('c_3', 'echo hi').script).toBe('{ echo hi\n}\n');
  });

  it('writes init scripts with the nonce and hooks for each shell', () => {
    for (const kind of ['bash', 'zsh', 'sh'] as const) {
      const init = new ShellIntegration(kind, NONCE).initScript({ envFile: '/p/env', noRc: false });
      expect(init).toContain(`__conch_n=${NONCE}`);
      expect(init).toContain('__conch_s()');
      expect(init).toContain('__conch_e()');
      expect(init).toContain("'/p/env'");
    }
    const noRc = bash.initScript({ envFile: '/p/env', noRc: true });
    expect(noRc).not.toContain('.bashrc');
    expect(bash.initScript({ envFile: '/p/env', noRc: false })).toContain('.bashrc');
    expect(bash.initScript({ envFile: '/p/env', noRc: false })).toContain('PROMPT_COMMAND=(__conch_pc');
  });

  it("reports a command's end before it snapshots the environment, then says the snapshot is written", () => {
    for (const kind of ['bash', 'zsh', 'sh'] as const) {
      const init = new ShellIntegration(kind, NONCE).initScript({ envFile: '/p/env', noRc: true });
      const end = init.split('\n').find((l) => l.startsWith('__conch_e()'))!;
      const e = end.indexOf(';E;');
      const snapshot = end.indexOf('export -p');
      const d = end.indexOf(';D;');
      expect(e).toBeGreaterThan(0);
      expect(snapshot).toBeGreaterThan(e);
      expect(d).toBeGreaterThan(snapshot);
      // The exit status survives the hook, and the snapshot's own errors never reach the terminal.
      expect(end).toMatch(/return \$__(conch_)?r; }$/);
      expect(end).toContain('2>/dev/null 1<> "$__conch_f"');
      // The D marker carries the snapshot's own status: a file written half is never loaded.
      expect(end).toMatch(/;D;%s;%s\\007' "\$__conch_n" "\$1" "\$\?"; return/);
    }
  });

  it('types the snapshot slot of a command after its id (slot 0 without one), and names its file alike', () => {
    expect(bash.encodeForeground('c_1', 'true', undefined, 0).line).toMatch(/^ __conch_s c_1;eval /);
    expect(bash.encodeForeground('c_1', 'true', undefined, 2).line).toMatch(/^ __conch_s c_1 2;eval /);
    const long = bash.encodeForeground('c_2', `echo ${'x'.repeat(MAX_TYPED_LINE)}`, undefined, 1);
    expect(long.line).toBe(' __conch_s c_2 1;. {{SCRIPT}};__conch_e c_2');
    expect(snapshotFile('/p/env', 0)).toBe('/p/env');
    expect(snapshotFile('/p/env', 2)).toBe('/p/env.2');
    for (const kind of ['bash', 'zsh', 'sh'] as const) {
      const init = new ShellIntegration(kind, NONCE).initScript({ envFile: '/p/env', noRc: true });
      expect(init).toContain('__conch_f="$__conch_envf${2:+.$2}"');
    }
  });

  it('launches each shell so that it sources the init script', () => {
    expect(bash.launch('/p/init.sh', { noRc: false }).args).toEqual([
      '--noprofile',
      '--rcfile',
      '/p/init.sh',
      '-i',
    ]);
    expect(new ShellIntegration('sh', NONCE).launch('/p/init.sh', { noRc: false }).env).toEqual({
      ENV: '/p/init.sh',
    });
    expect(new ShellIntegration('zsh', NONCE).launch('/p/s/.zshrc', { noRc: false }).env).toEqual({
      ZDOTDIR: '/p/s',
    });
  });

  it('builds the isolated wrapper with the text as a brace group argument', () => {
    const l = bash.isolatedLaunch({
      commandId: 'c_9',
      text: 'echo hi',
      cwd: '/tmp',
      envFile: '/p/env',
      shell: '/bin/bash',
    });
    // The session's shell runs it as the one job of a job-control leader (what it leaves running stays).
    expect(l.file).toBe('/bin/sh');
    expect(l.args.slice(0, 5)).toEqual(['-c', ISOLATED_JOB_LEADER, 'sh', '/bin/bash', '--norc']);
    // `$0` is the session's shell as it was started, so the command sees what it would typed into it.
    expect(l.args.slice(-5)).toEqual(['/bin/bash', '/p/env', '/tmp', '{ echo hi\n}', 'c_9']);
    // The nonce and the wrapper are handed over in the environment: argv is visible to every user in `ps`.
    expect(l.args.join(' ')).not.toContain(NONCE);
    expect(l.args.join(' ')).not.toContain('__conch');
    expect(l.args).toContain('eval "$CONCH_ISOLATED_SCRIPT"');
    expect(l.env[ISOLATED_NONCE_ENV]).toBe(NONCE);
    expect(l.env[ISOLATED_SCRIPT_ENV]).toContain('__conch_n');
  });

  it('guesses shell kinds and quotes', () => {
    expect(shellKindOf('/usr/bin/bash')).toBe('bash');
    expect(shellKindOf('zsh')).toBe('zsh');
    expect(shellKindOf('/bin/dash')).toBe('sh');
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
  });

  it('rejects weak nonces', () => {
    expect(() => new ShellIntegration('bash', 'short')).toThrow();
  });
});
