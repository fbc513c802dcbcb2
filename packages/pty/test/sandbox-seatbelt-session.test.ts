/**
 * Sandboxed local sessions on real Seatbelt (`sandbox-exec`, docs/sandbox.md "macOS"): the macOS twin of
 * sandbox-session.test.ts, run by the macOS workflow (it cannot run on Linux). The shell runs under
 * sandbox-exec itself; writes land only in the cwd and the session's temp dir; a deny_read file cannot be
 * read, nor linked out; the network is closed, or open through the proxy on 127.0.0.1 to the listed hosts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRealClock, resolveSandboxRules, SessionManager } from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

describe.runIf(process.platform === 'darwin')('a sandboxed local session on macOS (Seatbelt)', () => {
  let driver: LocalDriver;
  let manager: SessionManager;
  let spill: FileSpillStore;
  let work: string;
  let outside: string;
  let web: Server;
  let port: number;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'conch-seatbelt-work-'));
    outside = mkdtempSync(join(homedir(), '.conch-seatbelt-victim-'));
    writeFileSync(join(outside, 'victim'), 'intact\n');
    mkdirSync(join(outside, 'secret'));
    writeFileSync(join(outside, 'secret', 'token'), 'hunter2\n');
    web = createServer((_req, res) => res.end('hello from the host\n'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    port = (web.address() as AddressInfo).port;
    driver = createLocalDriver();
    spill = new FileSpillStore({});
    manager = new SessionManager({
      clock: createRealClock(),
      localDriver: driver,
      screen: createXtermScreen,
      spill,
      defaults: { cwd: work },
    });
  });

  afterAll(async () => {
    await manager?.shutdown();
    await driver?.dispose();
    spill?.dispose(true);
    await new Promise((resolve) => web?.close(resolve));
    rmSync(work, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const rules = (more: { deny_read?: string[]; network?: 'none' | string[] } = {}) =>
    resolveSandboxRules({ ...more }, { home: homedir(), cwd: work })!;

  it('runs the shell itself under sandbox-exec ($$ is its pid), writes in its cwd and temp dir only', async () => {
    const s = await manager.createLocal({ cwd: work, sandbox: rules() });
    expect(s.sandbox?.network).toBe('none');
    const me = await manager.execute({ session_id: s.session_id, command: 'echo "pid=$$"' });
    expect(me.output).toBe(`pid=${s.pid}`);
    const ok = await manager.execute({
      session_id: s.session_id,
      command: 'echo hi > made && cat made && echo tmp > "$TMPDIR/t" && export KEEP=1',
    });
    expect(ok.exit_code).toBe(0);
    expect(existsSync(join(work, 'made'))).toBe(true);
    const again = await manager.execute({
      session_id: s.session_id,
      command: 'echo "keep=$KEEP $(cat "$TMPDIR/t")"',
    });
    expect(again.output).toBe('keep=1 tmp');
    // Seatbelt cannot give the sandbox its own /tmp: the host's stays read-only.
    const tmp = await manager.execute({ session_id: s.session_id, command: 'touch /tmp/conch-seatbelt-$$' });
    expect(tmp.exit_code).toBe(1);
    const victim = join(outside, 'victim');
    const rm = await manager.execute({ session_id: s.session_id, command: `rm -f ${victim}` });
    expect(rm.exit_code).toBe(1);
    expect(rm.output).toContain('Operation not permitted');
    expect(rm.hint).toContain('outside the sandbox');
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
    // An isolated background command starts its own sandbox-exec with the session's profile.
    const bg = await manager.execute({
      session_id: s.session_id,
      command: `rm -f ${victim}; echo "bg-done $?"; echo iso > "$TMPDIR/iso"`,
      cwd: outside,
      background: true,
    });
    let done = bg;
    let output = bg.output;
    while (done.status !== 'completed') {
      done = await manager.readOutput({ command_id: bg.command_id, pause_timeout: 5 });
      output += done.output;
    }
    expect(output).toContain('bg-done 1');
    expect(readFileSync(victim, 'utf8')).toBe('intact\n');
    const shared = await manager.execute({ session_id: s.session_id, command: 'cat "$TMPDIR/iso"' });
    expect(shared.output).toBe('iso');
    await manager.closeSession(s.session_id);
  });

  it('cannot read a deny_read file, nor link it out into the cwd', async () => {
    const secret = join(outside, 'secret');
    const s = await manager.createLocal({ cwd: work, sandbox: rules({ deny_read: [secret] }) });
    const cat = await manager.execute({ session_id: s.session_id, command: `cat ${join(secret, 'token')}` });
    expect(cat.exit_code).toBe(1);
    expect(cat.output).not.toContain('hunter2');
    const ln = await manager.execute({
      session_id: s.session_id,
      command: `ln ${join(secret, 'token')} linked; cat linked`,
    });
    expect(ln.exit_code).not.toBe(0);
    expect(ln.output).not.toContain('hunter2');
    await manager.closeSession(s.session_id);
  });

  it('network none blocks 127.0.0.1; a host list reaches it through the proxy', async () => {
    const url = `http://127.0.0.1:${port}/`;
    const none = await manager.createLocal({ cwd: work, sandbox: rules() });
    const blocked = await manager.execute({ session_id: none.session_id, command: `curl -sS -m 5 ${url}` });
    expect(blocked.exit_code).toBe(7);
    await manager.closeSession(none.session_id);
    const listed = await manager.createLocal({ cwd: work, sandbox: rules({ network: ['127.0.0.1'] }) });
    const ok = await manager.execute({ session_id: listed.session_id, command: `curl -sS -m 5 ${url}` });
    expect(ok).toMatchObject({ exit_code: 0, output: 'hello from the host' });
    const other = await manager.execute({
      session_id: listed.session_id,
      command: `curl -fsS -m 5 http://localhost:${port}/`,
    });
    expect(other.exit_code).toBe(22);
    // A program that ignores the proxy reaches nothing.
    const direct = await manager.execute({
      session_id: listed.session_id,
      command: `curl -sS -m 5 --noproxy '*' ${url}`,
    });
    expect(direct.exit_code).toBe(7);
    await manager.closeSession(listed.session_id);
  });
});
