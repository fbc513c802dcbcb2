/**
 * One warm OpenCode server: spawned (`opencode serve` on 127.0.0.1, random port, random password) or
 * attached to a given URL; health-checked; stopped with its owner and never left behind.
 *
 * The spawned server runs in its own process group under a tiny `sh` guard that reads its stdin: our end of
 * that pipe closes when this process dies for any reason (even SIGKILL), and the guard then kills the whole
 * group. `stop()` kills the group itself (SIGTERM, then SIGKILL) and waits until it is gone.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ConchError, ErrorCode } from '@conch/core';
import { isEndedState } from '@conch/core/host';
import { processFacts } from '@conch/node';
import type { OpencodeClient } from '@opencode-ai/sdk/v2';
import { findOpencode, OPENCODE_INSTALL_HINT } from './locate.js';

/** How to reach OpenCode. */
export interface OpencodeServerOptions {
  /** Attach to this running server instead of spawning one. */
  url?: string;
  /** Password of the attached server (basic auth user `opencode`), if it has one. */
  password?: string;
  /** The opencode binary to spawn (default: PATH, then the bundled `opencode-ai`). */
  bin?: string;
  /** Environment of the spawned server (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How long the spawned server may take to listen (ms, default 30000). */
  startTimeoutMs?: number;
  /** Lines of the server's stderr, for logs. */
  onLog?: (line: string) => void;
}

/** The client factory of `@opencode-ai/sdk` v2. */
type CreateClient = typeof import('@opencode-ai/sdk/v2').createOpencodeClient;

let sdk: Promise<CreateClient> | undefined;

/**
 * `@opencode-ai/sdk`'s client factory, loaded by the first task rather than at start-up: a server that
 * never delegates does not hold the SDK. A failed load is not cached and is `DELEGATE_UNAVAILABLE`.
 */
export function loadOpencodeSdk(): Promise<CreateClient> {
  sdk ??= import('@opencode-ai/sdk/v2').then(
    (module) => module.createOpencodeClient,
    (error: unknown) => {
      sdk = undefined;
      throw new ConchError(
        ErrorCode.DELEGATE_UNAVAILABLE,
        `OpenCode's SDK (@opencode-ai/sdk) could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
        { hint: 'Reinstall conch (its dependency @opencode-ai/sdk is missing or broken).', cause: error },
      );
    },
  );
  return sdk;
}

const LISTENING = /opencode server listening on (https?:\/\/\S+)/;
// The guard: runs opencode in the background; on SIGTERM stops and reaps it; on stdin EOF (its owner died)
// kills the whole group.
const GUARD = `"$0" "$@" & pid=$!; trap 'kill -TERM $pid 2>/dev/null; wait $pid; exit 0' TERM; read _; kill -KILL 0`;

/** A running (spawned or attached) OpenCode server and its SDK client. */
export class OpencodeServer {
  readonly url: string;
  readonly client: OpencodeClient;
  /** The process group of a spawned server (undefined when attached). */
  readonly pgid: number | undefined;
  private readonly child: ChildProcess | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    createClient: CreateClient,
    url: string,
    password: string | undefined,
    child?: ChildProcess,
  ) {
    this.url = url;
    this.child = child;
    this.pgid = child?.pid;
    const headers: Record<string, string> = {};
    if (password !== undefined)
      headers.Authorization = `Basic ${Buffer.from(`opencode:${password}`).toString('base64')}`;
    this.client = createClient({ baseUrl: url, headers });
  }

  /**
   * Loads the SDK ({@link loadOpencodeSdk}), spawns or attaches (per `options`), then checks health.
   * Throws `DELEGATE_UNAVAILABLE` when it cannot.
   */
  static async start(options: OpencodeServerOptions = {}): Promise<OpencodeServer> {
    // First, so that a broken install spawns nothing.
    const createClient = await loadOpencodeSdk();
    const server =
      options.url !== undefined
        ? new OpencodeServer(createClient, options.url.replace(/\/+$/, ''), options.password)
        : await OpencodeServer.spawn(createClient, options);
    try {
      await server.health();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  private static async spawn(
    createClient: CreateClient,
    options: OpencodeServerOptions,
  ): Promise<OpencodeServer> {
    const bin = findOpencode(options.bin);
    if (bin === undefined) {
      throw new ConchError(
        ErrorCode.DELEGATE_UNAVAILABLE,
        options.bin === undefined
          ? 'OpenCode is not available: no opencode binary on PATH or in the opencode-ai package.'
          : `OpenCode is not available: ${JSON.stringify(options.bin)} is not an executable file.`,
        { hint: OPENCODE_INSTALL_HINT },
      );
    }
    const password = randomBytes(24).toString('base64url');
    const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), OPENCODE_SERVER_PASSWORD: password };
    delete env.OPENCODE_SERVER_USERNAME;
    const child = spawn('sh', ['-c', GUARD, bin, 'serve', '--hostname', '127.0.0.1', '--port', '0'], {
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const timeoutMs = options.startTimeoutMs ?? 30_000;
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const fail = (why: string): void => {
        clearTimeout(timer);
        reject(
          new ConchError(ErrorCode.DELEGATE_UNAVAILABLE, `OpenCode did not start (${bin}): ${why}`, {
            hint: OPENCODE_INSTALL_HINT,
            data: { output: output.slice(-2000) },
          }),
        );
      };
      const timer = setTimeout(() => fail(`not listening after ${timeoutMs} ms`), timeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = LISTENING.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        output += text;
        for (const line of text.split('\n')) if (line.trim() !== '') options.onLog?.(line);
      });
      child.on('error', (error) => fail(error.message));
      child.on('exit', (code, signal) => fail(`it exited (${signal ?? `code ${code}`})`));
    }).catch(async (error: unknown) => {
      await stopGuard(child);
      throw error;
    });
    // Keep draining its output so it never blocks on a full pipe.
    child.stdout?.resume();
    return new OpencodeServer(createClient, url, password, child);
  }

  /** Throws `DELEGATE_UNAVAILABLE` unless the server answers its health check. */
  async health(): Promise<void> {
    let healthy = false;
    let why = 'no answer';
    try {
      const response = await this.client.global.health();
      healthy = (response.data as { healthy?: boolean } | undefined)?.healthy === true;
      if (!healthy)
        why = response.error ? JSON.stringify(response.error) : `HTTP ${response.response?.status}`;
    } catch (error) {
      why = error instanceof Error ? error.message : String(error);
    }
    if (!healthy) {
      throw new ConchError(
        ErrorCode.DELEGATE_UNAVAILABLE,
        `OpenCode at ${this.url} is not healthy: ${why}.`,
        {
          hint: OPENCODE_INSTALL_HINT,
        },
      );
    }
  }

  /** Stops a spawned server (its whole process group) and waits until it is gone. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.child === undefined) return;
      await stopGuard(this.child);
    })();
    return this.stopping;
  }
}

/**
 * Stops a spawned server: SIGTERM to the guard (which stops and reaps opencode), SIGKILL to the whole group
 * if it has not exited after `graceMs`; resolves once the guard has exited.
 */
// Short enough that a face's own shutdown deadline (5 s) still sees the SIGKILL: an opencode that ignores
// SIGTERM would otherwise keep its guard waiting after the face has exited.
async function stopGuard(child: ChildProcess, graceMs = 1500): Promise<void> {
  const pgid = child.pid;
  if (pgid === undefined) return;
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const send = (target: number, name: NodeJS.Signals): void => {
    try {
      process.kill(target, name);
    } catch {
      // Already gone.
    }
  };
  send(pgid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  if ((await Promise.race([exited, late])) === 'late') send(-pgid, 'SIGKILL');
  clearTimeout(timer);
  await exited;
  // Anything opencode itself started and left in the group goes too; wait until it has.
  send(-pgid, 'SIGKILL');
  child.stdin?.destroy();
  const until = Date.now() + graceMs;
  while ((await processGroupAlive(pgid)) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

/** True while a live process (not a zombie) of group `pgid` is on this host, from its process facts. */
export async function processGroupAlive(pgid: number): Promise<boolean> {
  const table = await processFacts().processes();
  return table.some((p) => p.pgid === pgid && !isEndedState(p.state));
}
