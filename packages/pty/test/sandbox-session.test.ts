/**
 * Sandboxed local sessions on real bubblewrap (docs/sandbox.md): the driver starts the shell and isolated
 * commands inside the session's sandbox, and everything conch does from the host keeps working. Linux
 * only for the first part (a private /tmp); macOS has sandbox-seatbelt-session.test.ts.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveSandboxRules, type SessionManager } from '@conch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalDriver } from '../src/index.js';
import { type LocalTestEngine, startLocalEngine } from './helpers.js';

const linux = process.platform === 'linux';

let engine: LocalTestEngine;
let driver: LocalDriver;
let manager: SessionManager;
let work: string;
let outside: string;

beforeAll(() => {
  engine = startLocalEngine('conch-sandbox-work-');
  ({ driver, manager, work } = engine);
  outside = mkdtempSync(join(homedir(), '.conch-sandbox-victim-'));
  writeFileSync(join(outside, 'victim'), 'intact\n');
});

afterAll(async () => {
  await engine.close();
  rmSync(outside, { recursive: true, force: true });
});

const rules = () => resolveSandboxRules(true, { home: homedir(), cwd: work })!;

describe.runIf(linux)('a sandboxed local session', () => {
  it('writes in its cwd and /tmp, keeps state, and cannot write outside', async () => {
    const s = await manager.createLocal({ cwd: work, sandbox: rules() });
    expect(s.sandbox?.network).toBe('none');
    const ok = await manager.execute({
      session_id: s.session_id,
      command: 'echo hi > made && cat made && echo $TMPDIR && touch /tmp/x && export KEEP=1',
    });
    expect(ok.exit_code).toBe(0);
    expect(ok.output).toContain('hi');
    expect(existsSync(join(work, 'made'))).toBe(true);
    const again = await manager.execute({ session_id: s.session_id, command: 'echo "keep=$KEEP"; ls /tmp' });
    expect(again.output).toContain('keep=1');
    const victim = join(outside, 'victim');
    const rm = await manager.execute({ session_id: s.session_id, command: `rm -f ${victim}` });
    expect(rm.exit_code).not.toBe(0);
    expect(rm.hint).toContain('outside the sandbox');
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
    const bg = await manager.execute({
      session_id: s.session_id,
      command: `sleep 0.2; rm -f ${victim}; echo bg-done $?`,
      background: true,
    });
    const out = await manager.readOutput({ command_id: bg.command_id, pause_timeout: 5 });
    expect(out.status).toBe('completed');
    expect(`${bg.output}${out.output}`).toContain('bg-done 1');
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
    await manager.closeSession(s.session_id);
  });
});

describe('the private files of a sandboxed session', () => {
  it('are never written through a symbolic link the sandbox planted', async () => {
    const s = await manager.createLocal({ cwd: work, sandbox: rules() });
    const dir = manager.getSession(s.session_id).sandbox!.privateDir;
    const target = join(outside, 'victim');
    // From inside: a link where conch will write the script of a long command (its name is guessed here).
    await manager.execute({ session_id: s.session_id, command: `ln -s ${target} ${dir}/planted.sh` });
    await expect(driver.writePrivateFile(`${s.session_id}/planted.sh`, 'overwritten')).rejects.toThrow(
      /ELOOP/,
    );
    expect(readFileSync(target, 'utf8')).toBe('intact\n');
    await manager.closeSession(s.session_id);
  });
});
