/**
 * Where the container engine comes from (`--docker-host`, the config file's `container.docker_host`,
 * `DOCKER_HOST`, a local socket) and whether `create_container` is offered: configured engines always,
 * engines at a default place only when they answer.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config.js';
import { locateContainerEngine } from './container-sessions.js';
import { silentLogger } from './logger.js';

const dir = mkdtempSync(join(tmpdir(), 'conch-container-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(content: object): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('the container engine setting', () => {
  it('takes --docker-host over the config file, and the file over nothing', () => {
    const file = configFile({ container: { docker_host: 'unix:///from/file.sock' } });
    expect(resolveConfig({ config: file }).dockerHost).toEqual({
      address: 'unix:///from/file.sock',
      origin: 'config',
    });
    expect(resolveConfig({ config: file, dockerHost: 'tcp://127.0.0.1:2375' }).dockerHost).toEqual({
      address: 'tcp://127.0.0.1:2375',
      origin: 'flag',
    });
    expect(resolveConfig({}).dockerHost).toBeUndefined();
  });

  it('refuses a malformed address, naming the setting and the forms', () => {
    expect(() => resolveConfig({ dockerHost: 'ftp://x' })).toThrow(ConfigError);
    expect(() => resolveConfig({ dockerHost: 'ftp://x' })).toThrow(/--docker-host: .*ftp:.*unix:\/\/\/path/);
    const file = configFile({ container: { docker_host: 'unix://relative.sock' } });
    expect(() => resolveConfig({ config: file })).toThrow(/container\.docker_host: .*absolute path/);
    const unknown = configFile({ container: { host: 'x' } });
    expect(() => resolveConfig({ config: unknown })).toThrow(
      /unknown key "host" \(valid keys: docker_host\)/,
    );
  });

  it('offers create_container for a configured engine even when it does not answer, not for an absent one', async () => {
    const configured = await locateContainerEngine(
      resolveConfig({ dockerHost: `unix://${join(dir, 'none.sock')}` }),
      silentLogger,
    );
    expect(configured.offered).toBe(true);
    const saved = { host: process.env.DOCKER_HOST, runtime: process.env.XDG_RUNTIME_DIR };
    process.env.DOCKER_HOST = '';
    process.env.XDG_RUNTIME_DIR = join(dir, 'no-runtime');
    try {
      const found = await locateContainerEngine(resolveConfig({}), silentLogger);
      // This machine may have an engine at a usual place; then it must answer to be offered.
      if (found.location.address === undefined) expect(found.offered).toBe(false);
      else expect(found.location.origin).toBe('default');
    } finally {
      process.env.DOCKER_HOST = saved.host;
      process.env.XDG_RUNTIME_DIR = saved.runtime;
      if (saved.host === undefined) delete process.env.DOCKER_HOST;
      if (saved.runtime === undefined) delete process.env.XDG_RUNTIME_DIR;
    }
  });
});
