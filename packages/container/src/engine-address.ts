/**
 * Where the container engine is: a `DOCKER_HOST`-style address (`unix:///run/podman/podman.sock`,
 * `tcp://host:2375`, `ssh://user@host`), from `--docker-host`, the config file or the `DOCKER_HOST`
 * environment variable, else the first local socket that exists among the usual places (Docker's, Docker
 * Desktop's, rootless and rootful Podman's). Also a cheap ping of a local socket (plain HTTP, no client
 * library), so that a server can decide at start whether to offer container sessions without loading one.
 *
 * This module loads nothing heavy: it is `@conch/container/engine`, imported at start-up by the service.
 */

import { statSync } from 'node:fs';
import { request } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A parsed engine address. */
export type EngineAddress =
  | { kind: 'unix'; socketPath: string; text: string }
  | { kind: 'tcp'; host: string; port: number; tls: boolean; text: string }
  | { kind: 'ssh'; host: string; port: number; username: string | undefined; text: string };

/** Where the engine setting came from (for messages). */
export type EngineOrigin = 'flag' | 'config' | 'environment' | 'default';

/** The engine a server uses: its address (undefined when none was configured or found) and what was tried. */
export interface EngineLocation {
  address: EngineAddress | undefined;
  origin: EngineOrigin;
  /** The addresses looked at, in words (for `CONTAINER_ENGINE_UNREACHABLE`). */
  lookedAt: string[];
}

/** Why an engine address is malformed, for a person. */
export class EngineAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineAddressError';
  }
}

/** The address forms, for messages. */
export const ENGINE_ADDRESS_FORMS = 'unix:///path/to.sock, tcp://host:port or ssh://[user@]host[:port]';

/** Parses a `DOCKER_HOST`-style address (`unix://`, `tcp://`, `ssh://`; a bare `/path` is a socket). */
export function parseEngineAddress(text: string, env: NodeJS.ProcessEnv = process.env): EngineAddress {
  const value = text.trim();
  if (value.startsWith('/')) return { kind: 'unix', socketPath: value, text: `unix://${value}` };
  if (value.startsWith('unix://')) {
    const socketPath = value.slice('unix://'.length);
    if (!socketPath.startsWith('/')) {
      throw new EngineAddressError(
        `Invalid engine address ${JSON.stringify(text)}: a unix socket needs an absolute path (unix:///run/docker.sock).`,
      );
    }
    return { kind: 'unix', socketPath, text: value };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EngineAddressError(
      `Invalid engine address ${JSON.stringify(text)}; expected ${ENGINE_ADDRESS_FORMS}.`,
    );
  }
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:') {
    const port = url.port === '' ? (url.protocol === 'https:' ? 2376 : 2375) : Number(url.port);
    const tls = url.protocol === 'https:' || env.DOCKER_TLS_VERIFY === '1' || port === 2376;
    return { kind: 'tcp', host: url.hostname, port, tls, text: value };
  }
  if (url.protocol === 'ssh:') {
    return {
      kind: 'ssh',
      host: url.hostname,
      port: url.port === '' ? 22 : Number(url.port),
      username: url.username === '' ? undefined : decodeURIComponent(url.username),
      text: value,
    };
  }
  throw new EngineAddressError(
    `Invalid engine address ${JSON.stringify(text)}: unknown scheme ${url.protocol}; expected ${ENGINE_ADDRESS_FORMS}.`,
  );
}

/** The local sockets an engine usually listens on, in the order they are tried. */
export function defaultEngineSockets(env: NodeJS.ProcessEnv = process.env): string[] {
  const sockets = ['/var/run/docker.sock', join(homedir(), '.docker', 'run', 'docker.sock')];
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime) sockets.push(join(runtime, 'podman', 'podman.sock'));
  sockets.push('/run/podman/podman.sock');
  return sockets;
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * Where the engine is: `configured` (the flag's or the config file's value, which wins), else `DOCKER_HOST`,
 * else the first of {@link defaultEngineSockets} that exists. Throws {@link EngineAddressError} for a
 * malformed address.
 */
export function locateEngine(
  configured: { address: string; origin: 'flag' | 'config' } | undefined,
  env: NodeJS.ProcessEnv = process.env,
): EngineLocation {
  if (configured !== undefined) {
    const address = parseEngineAddress(configured.address, env);
    return { address, origin: configured.origin, lookedAt: [address.text] };
  }
  const fromEnv = env.DOCKER_HOST?.trim();
  if (fromEnv) {
    const address = parseEngineAddress(fromEnv, env);
    return { address, origin: 'environment', lookedAt: [`${address.text} (DOCKER_HOST)`] };
  }
  const candidates = defaultEngineSockets(env);
  const found = candidates.find(isSocket);
  return {
    address: found === undefined ? undefined : { kind: 'unix', socketPath: found, text: `unix://${found}` },
    origin: 'default',
    lookedAt: candidates.map((path) => `unix://${path}`),
  };
}

/** Whether an engine was configured explicitly (flag, config file or `DOCKER_HOST`). */
export function isConfigured(location: EngineLocation): boolean {
  return location.origin !== 'default';
}

/**
 * Asks a local engine socket `GET /_ping` and resolves true when it answers `OK` within `timeoutMs`
 * (never rejects). Other addresses are not pinged here (false).
 */
export function pingLocalEngine(address: EngineAddress, timeoutMs: number): Promise<boolean> {
  if (address.kind !== 'unix') return Promise.resolve(false);
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(ok);
    };
    const req = request({ socketPath: address.socketPath, path: '/_ping', method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (body.length > 64) done(false);
      });
      res.on('end', () => done(res.statusCode === 200 && body.trim() === 'OK'));
      res.on('error', () => done(false));
    });
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    req.on('error', () => done(false));
    req.end();
  });
}
