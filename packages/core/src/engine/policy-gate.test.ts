import { describe, expect, it } from 'vitest';
import type { InputWaitEvidence } from '../driver.js';
import { ConchError } from '../errors.js';
import { OutputLog } from '../output/output-log.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeDriver } from '../testing/fake-driver.js';
import { Command, type CommandTerminal } from './command.js';
import { PolicyGate, SECRET_WITHHELD, TYPE_AHEAD_GRACE_MS } from './policy-gate.js';
import type { AuditEntry, CommandPolicy } from './policy-hook.js';

/** A policy with one rule: any simple command or assignment that mentions a listed word is denied. */
function denying(...words: string[]): CommandPolicy {
  return {
    active: true,
    evaluate: (command) => {
      const denied = words.some((w) => command.includes(w));
      return {
        decision: denied ? 'deny' : 'allow',
        reason: denied ? `${command} is denied` : `${command} is allowed`,
        commands: [
          { text: command, argv: command.split(' '), decision: denied ? 'deny' : 'allow', rule: 'words' },
        ],
      };
    },
  };
}

function gateWith(policy?: CommandPolicy) {
  const audit: AuditEntry[] = [];
  const gate = new PolicyGate({
    writeDeadlineMs: 1000,
    audit: { record: (e) => audit.push(e) },
    ...(policy ? { policy } : {}),
  });
  return { gate, audit };
}

/** A running command whose terminal reports `programs` in its foreground and `evidence` of an input wait. */
function commandIn(programs: string[], evidence: InputWaitEvidence | (() => InputWaitEvidence)) {
  const clock = new FakeClock();
  const written: string[] = [];
  const terminal: CommandTerminal = {
    write: async (data) => {
      written.push(typeof data === 'string' ? data : new TextDecoder().decode(data));
    },
    inputWaitEvidence: async () => (typeof evidence === 'function' ? evidence() : evidence),
    kill: async () => ({ result: 'killed', survivors: [] }),
    screen: async () => undefined,
    addSecret: () => {},
    foregroundProgram: async () => programs[0],
    foregroundPrograms: async () => programs,
  };
  const command = new Command({
    id: 'c1',
    sessionId: 's1',
    text: 'bash',
    isolated: false,
    background: false,
    log: new OutputLog({ ringChars: 1 << 16, rawRingBytes: 1 << 16 }),
    clock,
    terminal,
  });
  return { command, written };
}

async function denial(promise: Promise<unknown> | (() => unknown)): Promise<ConchError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (ConchError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a ConchError');
}

describe('PolicyGate without a policy', () => {
  it('allows every line and still records each in the audit log', () => {
    const { gate, audit } = gateWith();
    expect(gate.active).toBe(false);
    gate.checkLine('rm -rf /tmp/x', 'execute', 'default');
    expect(audit).toEqual([
      {
        kind: 'execute',
        session_id: 'default',
        input: 'rm -rf /tmp/x',
        decision: 'allow',
        reason: 'no policy rules are configured',
      },
    ]);
  });

  it('types anything, lets a person type into an attached view, and explains that all is allowed', async () => {
    const { gate, audit } = gateWith();
    const { command } = commandIn(['bash'], 'no');
    await gate.checkTypedInput(command, 'anything\x1b[A\r', 'respond', false);
    expect(gate.attachAccess('s1', {})).toEqual({ input: true, readOnlyReason: undefined });
    expect(gate.explain('rm x')).toMatchObject({ decision: 'allow', commands: [] });
    expect(audit.map((e) => e.kind)).toEqual(['check']);
  });

  it('still refuses malformed env entries and shells', async () => {
    const { gate } = gateWith();
    expect((await denial(() => gate.checkEnv({ 'BAD-NAME': 'x' }))).code).toBe('INVALID_ARGUMENT');
    expect((await denial(() => gate.checkEnv({ OK: 'a\0b' }))).code).toBe('INVALID_ARGUMENT');
    const driver = new FakeDriver({ clock: new FakeClock() });
    expect((await denial(gate.checkShell('bash\n', driver))).code).toBe('INVALID_ARGUMENT');
    await gate.checkShell('/opt/anything', driver);
  });
});

describe('PolicyGate under a policy', () => {
  it('denies a command line with the sub-command and rule, and audits it', async () => {
    const { gate, audit } = gateWith(denying('rm'));
    const error = await denial(() => gate.checkLine('rm -rf /', 'execute', 's1'));
    expect(error.code).toBe('POLICY_DENIED');
    expect(error.data).toMatchObject({ command: 'rm -rf /', rule: 'words' });
    expect(audit).toEqual([
      {
        kind: 'execute',
        session_id: 's1',
        input: 'rm -rf /',
        decision: 'deny',
        reason: 'rm -rf / is denied',
      },
    ]);
  });

  it('never echoes or audits secret text, allowed or denied', async () => {
    const { gate, audit } = gateWith(denying('hunter2'));
    gate.checkLine('s3cret', 'respond', 's1', 'c1', true);
    const error = await denial(() => gate.checkLine('hunter2', 'respond', 's1', 'c1', true));
    expect(error.code).toBe('POLICY_DENIED');
    expect(JSON.stringify(error)).not.toContain('hunter2');
    expect(error.message).not.toContain('hunter2');
    expect(audit.map((e) => e.input)).toEqual([SECRET_WITHHELD, SECRET_WITHHELD]);
    expect(JSON.stringify(audit)).not.toMatch(/hunter2|s3cret/);
  });

  it('starts only known shells, and names the shells the host has when one is missing', async () => {
    const { gate, audit } = gateWith(denying('nothing'));
    const driver = new FakeDriver({ clock: new FakeClock() });
    expect((await denial(gate.checkShell('/tmp/evil.sh', driver))).code).toBe('POLICY_DENIED');
    expect(audit).toMatchObject([
      { kind: 'execute', decision: 'deny', input: 'create_local shell=/tmp/evil.sh' },
    ]);
    class HostWithBashOnly extends FakeDriver {
      async findProgram(name: string): Promise<string | undefined> {
        return name === 'bash' ? '/bin/bash' : undefined;
      }
    }
    const host = new HostWithBashOnly({ clock: new FakeClock() });
    const missing = await denial(gate.checkShell('zsh', host));
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.message).toContain('Shells found on this host: bash.');
    await gate.checkShell('bash', host);
  });

  it('checks env entries as assignments without recording their values', async () => {
    const { gate, audit } = gateWith(denying('PATH='));
    gate.checkEnv({ FOO: 'secret-value' });
    const error = await denial(() => gate.checkEnv({ PATH: '/tmp/evil' }));
    expect(error.code).toBe('POLICY_DENIED');
    expect(error.data).toEqual({ env: 'PATH' });
    expect(audit.map((e) => [e.input, e.decision])).toEqual([
      ['create_local env FOO=…', 'allow'],
      ['create_local env PATH=…', 'deny'],
    ]);
    expect(JSON.stringify(audit)).not.toMatch(/secret-value|\/tmp\/evil/);
  });

  it('refuses type-ahead: text for a program that is not reading the terminal', async () => {
    const { gate } = gateWith(denying('rm'));
    const { command } = commandIn(['make'], 'no');
    const error = await denial(gate.checkTypedInput(command, 'y\r', 'respond', false));
    expect(error.message).toContain('type-ahead: make is not reading the terminal (it is busy)');
  });

  it('waits up to the type-ahead grace for a busy shell to read again (a redraw, a loaded machine)', async () => {
    const clock = new FakeClock();
    const gate = new PolicyGate({ writeDeadlineMs: 1000, policy: denying('rm'), clock });
    let looks = 0;
    const { command } = commandIn(['bash'], () => (++looks < 4 ? 'no' : 'blocked_read'));
    let done = false;
    const typed = gate.checkTypedInput(command, 'echo hi\r', 'respond', false).then(() => {
      done = true;
    });
    await clock.advance(TYPE_AHEAD_GRACE_MS / 2);
    await typed;
    expect(done).toBe(true);
    expect(looks).toBe(4);
  });

  it('refuses type-ahead once the program stayed busy for the whole grace', async () => {
    const clock = new FakeClock();
    const gate = new PolicyGate({ writeDeadlineMs: 1000, policy: denying('rm'), clock });
    const { command } = commandIn(['make'], 'no');
    const refused = denial(gate.checkTypedInput(command, 'y\r', 'respond', false));
    let settled = false;
    void refused.then(() => {
      settled = true;
    });
    await clock.advance(TYPE_AHEAD_GRACE_MS - 100);
    expect(settled).toBe(false);
    await clock.advance(200);
    expect((await refused).message).toContain('type-ahead: make is not reading the terminal (it is busy)');
  });

  it('lets signal keys through whatever reads, and text into a program that runs no typed commands', async () => {
    const { gate, audit } = gateWith(denying('rm'));
    const busy = commandIn(['make'], 'no');
    await gate.checkTypedInput(busy.command, '\x03', 'send_control', false);
    const reader = commandIn(['python3'], 'blocked_read');
    await gate.checkTypedInput(reader.command, 'rm -rf /\r', 'respond', false);
    expect(audit.map((e) => e.reason)).toEqual([
      'signal keys only (Ctrl+C, Ctrl+Z, Ctrl+\\)',
      'typed into python3, which does not run typed commands',
    ]);
  });

  it('checks each whole line typed into a shell when it is submitted, holding the unsubmitted part', async () => {
    const { gate, audit } = gateWith(denying('rm'));
    const { command, written } = commandIn(['sudo', 'bash'], 'blocked_read');
    await gate.checkTypedInput(command, 'echo', 'respond', false);
    expect(command.pendingShellInput).toBe('echo');
    await gate.checkTypedInput(command, ' hi\r', 'respond', false);
    expect(command.pendingShellInput).toBe('');
    expect(audit.map((e) => [e.input, e.decision])).toEqual([
      ['echo', 'allow'],
      ['echo hi', 'allow'],
    ]);
    await gate.checkTypedInput(command, 'r', 'respond', false);
    const error = await denial(gate.checkTypedInput(command, 'm -rf /\r', 'respond', false));
    expect(error.code).toBe('POLICY_DENIED');
    // The half-typed line is cleared (Ctrl+U), so the denied command cannot complete later.
    expect(written).toEqual(['\x15']);
    expect(command.pendingShellInput).toBe('');
  });

  it('refuses keys that edit the line or recall history in a shell', async () => {
    const { gate } = gateWith(denying('rm'));
    const { command } = commandIn(['bash'], 'blocked_read');
    const error = await denial(gate.checkTypedInput(command, '\x1b[A\r', 'send_control', false));
    expect(error.message).toContain('an escape sequence');
    expect(error.data).toEqual({ kind: 'send_control' });
  });

  it('makes an attached view read-only unless taken over, and refuses a take-over from a conch terminal', async () => {
    const { gate, audit } = gateWith(denying('rm'));
    expect(gate.attachAccess('s1', {})).toEqual({
      input: false,
      readOnlyReason: 'a command policy is configured; take over explicitly to type into the session',
    });
    expect(gate.attachAccess('s1', { takeOver: true })).toEqual({ input: true, readOnlyReason: undefined });
    const error = await denial(() => gate.attachAccess('s1', { takeOver: true, fromConchTerminal: true }));
    expect(error.code).toBe('POLICY_DENIED');
    expect(audit.map((e) => [e.kind, e.input, e.decision])).toEqual([
      ['attach', 'take over', 'allow'],
      ['attach', 'take over', 'deny'],
    ]);
  });

  it("records a person's submitted line as theirs, saying when it was edited", () => {
    const { gate, audit } = gateWith(denying('rm'));
    gate.recordPersonLine('s1', { text: 'ls', exact: false });
    expect(audit).toEqual([
      expect.objectContaining({ kind: 'attach', by: 'person', input: 'ls', decision: 'allow' }),
    ]);
    expect(audit[0]?.reason).toContain('edited with keys conch does not replay');
  });
});
