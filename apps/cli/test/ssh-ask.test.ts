/**
 * `conch ssh` under host key policy `ask`: the daemon's service asks the person through the CLI, which asks
 * on its terminal (yes/no) — on a real pseudo-terminal (node-pty driving the built binary) against a real
 * sshd on 127.0.0.1 from `@conch/ssh/testing`. Without a terminal nobody is asked and the key is refused.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { describe, expect, it } from 'vitest';
import { conchOnTty } from './harness.js';
import { useSshHome } from './ssh-home.js';

const ssh = useSshHome();
const env = () => ({ ...(ssh.home.env as Record<string, string>) });

const knownHosts = () => join(ssh.userHome, '.ssh', 'known_hosts');
const sshArgs = () => [
  'ssh',
  `${ssh.fx.user}@127.0.0.1:${ssh.sshd.port}`,
  '-i',
  ssh.fx.keys.plain,
  '--host-key-policy',
  'ask',
];

describe('conch ssh asks the person on the terminal about an unknown host key', () => {
  it('no refuses the key; yes connects and records it in known_hosts', async () => {
    const declined = conchOnTty(sshArgs(), env());
    await waitFor(() => declined.text.includes('[y/N]'), {
      timeoutMs: 60_000,
      what: 'the host key question',
    });
    expect(declined.text).toContain(`Fingerprint: ${ssh.fx.fingerprint('a')}`);
    expect(declined.text).toContain(`Port: ${ssh.sshd.port}`);
    declined.term.write('n\r');
    await waitFor(() => declined.exitCode !== undefined, { timeoutMs: 60_000, what: 'conch ssh ends' });
    expect(declined.exitCode).toBe(1);
    expect(existsSync(knownHosts())).toBe(false);

    const accepted = conchOnTty(sshArgs(), env());
    await waitFor(() => accepted.text.includes('[y/N]'), {
      timeoutMs: 60_000,
      what: 'the host key question',
    });
    accepted.term.write('y\r');
    await waitFor(() => accepted.exitCode !== undefined, { timeoutMs: 60_000, what: 'conch ssh ends' });
    expect(accepted.exitCode).toBe(0);
    expect(accepted.text).toMatch(/s_[a-z0-9]{6,}\r?\n/);
    expect(readFileSync(knownHosts(), 'utf8')).toContain(ssh.fx.knownHostsLine(ssh.sshd.port, 'a'));
  }, 180_000);

  it('without a terminal nobody is asked: the key is refused with its fingerprint', async () => {
    const run = await ssh.home.conch(sshArgs());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(ssh.fx.fingerprint('a'));
    expect(run.stderr).not.toContain('[y/N]');
    expect(existsSync(knownHosts())).toBe(false);
  }, 120_000);
});
