/**
 * One container engine reached through the Docker Engine API with dockerode (loaded on first use): its
 * client, a bounded ping, and the translation of the engine's failures into conch's errors —
 * `CONTAINER_ENGINE_UNREACHABLE` naming where conch looked, and engine answers (404, 409, …) kept as they are
 * for the caller to word.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConchError, ErrorCode } from '@conch/core';
import type Docker from 'dockerode';
import { type EngineAddress, type EngineLocation, isConfigured } from './engine-address.js';

/** How long a single engine request may take before the engine counts as unreachable. */
export const ENGINE_REQUEST_TIMEOUT_MS = 15_000;

/** The socket-level failures that mean "the engine cannot be reached" (not "the engine said no"). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'EPERM',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ABORT_ERR',
]);

/** An error the engine answered with (an HTTP status), as dockerode reports it. */
export interface EngineAnswer {
  statusCode: number;
  message: string;
}

/** The engine's HTTP answer in a dockerode error, or undefined when the request did not get one. */
export function engineAnswer(error: unknown): EngineAnswer | undefined {
  const e = error as { statusCode?: unknown; json?: { message?: unknown }; message?: unknown } | null;
  if (!e || typeof e.statusCode !== 'number') return undefined;
  const message =
    typeof e.json?.message === 'string' ? e.json.message : typeof e.message === 'string' ? e.message : '';
  return { statusCode: e.statusCode, message: message.trim() };
}

/** True when `error` says the engine could not be reached at all. */
export function isUnreachable(error: unknown): boolean {
  if (engineAnswer(error) !== undefined) return false;
  const e = error as { code?: unknown; message?: unknown; name?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return true;
  if (e.name === 'AbortError') return true;
  return typeof e.message === 'string' && /socket hang up|connect|timed out|closed/i.test(e.message);
}

/** The docker-modem options of an address (every key explicit, so that `DOCKER_HOST` never overrides it). */
function modemOptions(address: EngineAddress, env: NodeJS.ProcessEnv): Docker.DockerOptions {
  const none = { socketPath: undefined, host: undefined, port: undefined, protocol: undefined };
  switch (address.kind) {
    case 'unix':
      return { ...none, socketPath: address.socketPath };
    case 'tcp': {
      const certs = env.DOCKER_CERT_PATH;
      const tls =
        address.tls && certs
          ? {
              ca: readFileSync(join(certs, 'ca.pem')),
              cert: readFileSync(join(certs, 'cert.pem')),
              key: readFileSync(join(certs, 'key.pem')),
            }
          : {};
      return {
        ...none,
        host: address.host,
        port: address.port,
        protocol: address.tls ? 'https' : 'http',
        ...tls,
      };
    }
    case 'ssh':
      return {
        ...none,
        host: address.host,
        port: address.port,
        protocol: 'ssh',
        ...(address.username === undefined ? {} : { username: address.username }),
        ...(env.SSH_AUTH_SOCK ? { sshOptions: { agent: env.SSH_AUTH_SOCK } } : {}),
      };
  }
}

let dockerode: Promise<typeof Docker> | undefined;

/** dockerode, loaded once on first use (a failed load is not cached). */
function loadDockerode(): Promise<typeof Docker> {
  dockerode ??= import('dockerode').then(
    (module) => (module as unknown as { default: typeof Docker }).default,
    (error: unknown) => {
      dockerode = undefined;
      throw new ConchError(
        ErrorCode.INTERNAL,
        `The container driver could not load dockerode: ${error instanceof Error ? error.message : String(error)}`,
        {
          hint: 'Reinstall conch (its dependency dockerode is missing or broken); other sessions are unaffected.',
        },
      );
    },
  );
  return dockerode;
}

/** A container engine (see the module doc). */
export class ContainerEngine {
  readonly location: EngineLocation;
  private readonly env: NodeJS.ProcessEnv;
  private client: Promise<Docker> | undefined;

  constructor(location: EngineLocation, env: NodeJS.ProcessEnv = process.env) {
    this.location = location;
    this.env = env;
  }

  /** The engine's address in words (`unix:///run/podman/podman.sock`), or what was looked at. */
  get where(): string {
    return this.location.address?.text ?? this.location.lookedAt.join(', ');
  }

  /** The `CONTAINER_ENGINE_UNREACHABLE` error for this engine (naming where it looked), with `cause`. */
  unreachable(cause?: unknown): ConchError {
    const { address, lookedAt } = this.location;
    const why =
      cause === undefined
        ? ''
        : ` (${(cause as { code?: string }).code ?? (cause instanceof Error ? cause.message : String(cause))})`;
    const message =
      address === undefined
        ? `No container engine was found: conch looked at ${lookedAt.join(', ')} and DOCKER_HOST is not set.`
        : `The container engine at ${address.text}${isConfigured(this.location) ? '' : ' (found at a default place)'} cannot be reached${why}.`;
    return new ConchError(ErrorCode.CONTAINER_ENGINE_UNREACHABLE, message, {
      hint:
        address === undefined
          ? 'Start Docker or Podman (podman system service), or give its address with --docker-host or DOCKER_HOST (unix:///path.sock, tcp://host:port, ssh://user@host).'
          : 'Check that the engine runs there (docker info, or podman system service for Podman) and that this user may use its socket; other sessions are unaffected.',
      data: { looked_at: address === undefined ? lookedAt : [address.text] },
      ...(cause === undefined ? {} : { cause }),
    });
  }

  /** The dockerode client (created on first use; rejects with CONTAINER_ENGINE_UNREACHABLE when there is none). */
  docker(): Promise<Docker> {
    const address = this.location.address;
    if (address === undefined) return Promise.reject(this.unreachable());
    this.client ??= loadDockerode().then((Dockerode) => new Dockerode(modemOptions(address, this.env)));
    return this.client;
  }

  /**
   * Runs one engine request with a deadline. A request that cannot reach the engine (or outlives the
   * deadline) rejects with CONTAINER_ENGINE_UNREACHABLE; the engine's own answers are rethrown as they are.
   */
  async request<T>(
    what: (docker: Docker, signal: AbortSignal) => Promise<T>,
    timeoutMs = ENGINE_REQUEST_TIMEOUT_MS,
  ): Promise<T> {
    const docker = await this.docker();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(this.unreachable(new Error(`no answer within ${timeoutMs} ms`)));
      }, timeoutMs);
    });
    try {
      return await Promise.race([what(docker, controller.signal), deadline]);
    } catch (error) {
      if (ConchError.is(error)) throw error;
      if (isUnreachable(error)) throw this.unreachable(error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Pings the engine (CONTAINER_ENGINE_UNREACHABLE when it does not answer within `timeoutMs`). */
  async ping(timeoutMs = 5000): Promise<void> {
    // dockerode takes an abort signal here although its type definitions do not say so.
    const ping = (docker: Docker, abortSignal: AbortSignal) =>
      (docker.ping as unknown as (options: { abortSignal: AbortSignal }) => Promise<unknown>).call(docker, {
        abortSignal,
      });
    await this.request(ping, timeoutMs);
  }
}
