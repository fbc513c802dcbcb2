/**
 * Which sandbox each platform gets and when the host cannot sandbox (docs/sandbox.md "Platforms"): the
 * decisions are pure functions of what the host reports, so macOS's are checked here with the facts a Mac
 * gives; the macOS workflow runs the real `sandbox-exec` (sandbox-seatbelt-session.test.ts). Also the
 * pieces of the sandbox that run anywhere: the proxy on 127.0.0.1 (macOS) and how a program is found under
 * the terminal's process.
 */
import { spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { processFacts } from '@conch/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SANDBOX_EXEC,
  sandboxPlatform,
  sandboxTools,
  seatbeltProblem,
  unsupportedPlatform,
} from '../src/sandbox/availability.js';
import { startLoopbackProxy } from '../src/sandbox/host-proxy.js';
import { locateProgram } from '../src/sandbox/sandbox-launcher.js';

describe('the sandbox of each platform', () => {
  it('is bubblewrap on Linux, Seatbelt on macOS, and none elsewhere', () => {
    expect(sandboxPlatform('linux')).toBe('bubblewrap');
    expect(sandboxPlatform('darwin')).toBe('seatbelt');
    for (const platform of ['win32', 'freebsd', 'openbsd', 'aix', 'sunos'] as const) {
      expect(sandboxPlatform(platform)).toBeUndefined();
    }
    const problem = unsupportedPlatform('win32');
    expect(problem.message).toContain('not available on win32');
    expect(problem.message).toContain('bubblewrap on Linux');
    expect(problem.message).toContain('sandbox-exec (Seatbelt) on macOS');
    expect(problem.hint).toContain('without a sandbox');
  });

  it.runIf(process.platform === 'linux')('gives bubblewrap tools on this Linux host', async () => {
    expect(await sandboxTools(false)).toMatchObject({ kind: 'bubblewrap' });
  });
});

describe('Seatbelt availability on macOS', () => {
  it('works when sandbox-exec is there and its probe succeeds', () => {
    expect(seatbeltProblem(true, { status: 0, said: '' })).toBeUndefined();
  });

  it('names sandbox-exec when it is missing', () => {
    const problem = seatbeltProblem(false, undefined);
    expect(problem?.message).toContain(SANDBOX_EXEC);
    expect(problem?.hint).toContain('part of macOS');
  });

  it('says that Seatbelt cannot nest when conch itself runs in a sandbox', () => {
    const problem = seatbeltProblem(true, {
      status: 71,
      said: 'sandbox-exec: sandbox_apply: Operation not permitted\n',
    });
    expect(problem?.message).toBe(
      'Cannot sandbox: sandbox-exec could not apply a profile (sandbox-exec: sandbox_apply: Operation not permitted).',
    );
    expect(problem?.hint).toContain('cannot nest');
  });

  it('reports any other failure with what sandbox-exec said, or how it ended', () => {
    const said = seatbeltProblem(true, { status: 65, said: 'sandbox-exec: unbound variable' });
    expect(said?.message).toBe('Cannot sandbox: sandbox-exec failed (sandbox-exec: unbound variable).');
    expect(said?.hint).toContain('/usr/bin/sandbox-exec -p "(version 1)(allow default)" /usr/bin/true');
    expect(seatbeltProblem(true, { status: null, said: '' })?.message).toBe(
      'Cannot sandbox: sandbox-exec failed (exit by a signal).',
    );
    expect(seatbeltProblem(true, { status: 1, said: '' })?.message).toBe(
      'Cannot sandbox: sandbox-exec failed (exit 1).',
    );
  });
});

describe('the host proxy on 127.0.0.1 (macOS host lists)', () => {
  let web: Server;
  let port: number;

  beforeAll(async () => {
    web = createServer((_req, res) => res.end('hello from the host\n'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    port = (web.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => web.close(resolve));
  });

  /** A plain-HTTP request for `url` through the proxy on `proxyPort`: its status and body. */
  function viaProxy(proxyPort: number, url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: proxyPort, path: url, method: 'GET', agent: false },
        (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('listens on an ephemeral port, reaches the listed host, refuses another, and closes', async () => {
    const proxy = await startLoopbackProxy(['127.0.0.1']);
    try {
      expect(proxy.port).toBeGreaterThan(0);
      expect(await viaProxy(proxy.port, `http://127.0.0.1:${port}/`)).toEqual({
        status: 200,
        body: 'hello from the host\n',
      });
      const refused = await viaProxy(proxy.port, `http://localhost:${port}/`);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('conch sandbox: host localhost is not allowed');
    } finally {
      proxy.close();
    }
    await expect(viaProxy(proxy.port, `http://127.0.0.1:${port}/`)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('the program of a sandboxed terminal', () => {
  it('is the child of the terminal’s process at depth 1 (nsenter), and not found when not given time', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const found = await locateProgram(process.pid, 1, () => false);
      expect(found).toBeDefined();
      expect((await processFacts().process(found as number))?.ppid).toBe(process.pid);
      // At depth 2 (bubblewrap) it is the grandchild: sleep has none, and no time is given to wait for one.
      expect(await locateProgram(process.pid, 2, () => false, 0)).toBeUndefined();
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
