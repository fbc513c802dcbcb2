import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseHostSpec, resolveHostConfig } from './ssh-config.js';

const dir = mkdtempSync(join(tmpdir(), 'conch-sshcfg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseHostSpec', () => {
  it('reads [user@]host[:port] and [v6]:port', () => {
    expect(parseHostSpec('example.org')).toEqual({ host: 'example.org' });
    expect(parseHostSpec('bob@example.org:2222')).toEqual({
      host: 'example.org',
      port: 2222,
      username: 'bob',
    });
    expect(parseHostSpec('[::1]:22')).toEqual({ host: '::1', port: 22 });
    expect(parseHostSpec('::1')).toEqual({ host: '::1' });
  });
});

describe('resolveHostConfig', () => {
  it('honours HostName, User, Port, IdentityFile (with tokens), ProxyJump, known_hosts settings and Include', () => {
    const included = join(dir, 'extra.conf');
    writeFileSync(included, ['Host jump', '  HostName jump.example', '  User hopper', ''].join('\n'));
    const config = join(dir, 'config');
    writeFileSync(
      config,
      [
        `Include ${included}`,
        'Host box',
        '  HostName %h.internal',
        '  Port 2200',
        '  User alice',
        '  IdentityFile ~/.ssh/id_%r_%p',
        '  ProxyJump jump,carol@gate:2022',
        '  UserKnownHostsFile ~/kh1 ~/kh2',
        '  HashKnownHosts yes',
        '  HostKeyAlias box-alias',
        'Host *',
        '  User fallback',
        '  IdentityFile ~/.ssh/id_all',
        '',
      ].join('\n'),
    );
    const box = resolveHostConfig('box', config);
    expect(box).toEqual({
      alias: 'box',
      hostName: 'box.internal',
      port: 2200,
      user: 'alice',
      identityFiles: [join(homedir(), '.ssh/id_alice_2200'), join(homedir(), '.ssh/id_all')],
      proxyJump: [{ host: 'jump' }, { host: 'gate', port: 2022, username: 'carol' }],
      knownHostsFiles: [join(homedir(), 'kh1'), join(homedir(), 'kh2')],
      hashKnownHosts: true,
      hostKeyAlias: 'box-alias',
    });
    expect(resolveHostConfig('jump', config)).toMatchObject({ hostName: 'jump.example', user: 'hopper' });
    expect(resolveHostConfig('unlisted', config)).toMatchObject({
      hostName: 'unlisted',
      user: 'fallback',
      proxyJump: [],
    });
  });

  it('treats a missing config, or none, as no settings', () => {
    expect(resolveHostConfig('h', join(dir, 'missing'))).toEqual({
      alias: 'h',
      hostName: 'h',
      identityFiles: [],
      proxyJump: [],
      knownHostsFiles: [],
      hashKnownHosts: false,
    });
    expect(resolveHostConfig('h', null).hostName).toBe('h');
  });

  it('never runs Match exec', () => {
    const marker = join(dir, 'exec-ran');
    const config = join(dir, 'config-exec');
    writeFileSync(config, [`Match exec "touch ${marker}"`, '  User evil', ''].join('\n'));
    expect(resolveHostConfig('h', config).user).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });
});
