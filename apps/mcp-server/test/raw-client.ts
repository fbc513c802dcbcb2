/**
 * A raw JSON-RPC client for the BUILT server, for framing tests: it writes arbitrary bytes (not only valid
 * messages) to one of conch's doors (`stdio`, the daemon's socket, the relay: see targets.ts) and collects
 * every line the door answers.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { waitFor } from '@conch/core/testing';
import { isAlive } from './harness.js';
import { openDoor, type Target } from './targets.js';

/** One JSON-RPC message from the server. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** A server process spoken to with raw lines. */
export interface RawServer {
  target: Target;
  /** The process whose stdin and stdout carry the lines (the server, the socket pipe or the relay). */
  child: ChildProcess;
  /** The engine's pid: the server's for `stdio`, else the daemon's. */
  pid: number;
  /** Every message received so far, in order. */
  messages: RpcMessage[];
  stderr(): string;
  /** Writes raw text (add the newline yourself). */
  write(text: string | Buffer): Promise<void>;
  /** Sends a request with a fresh numeric id and waits for the answer with that id. */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<RpcMessage>;
  /** Waits for the answer with `id`. */
  answer(id: string | number | null, timeoutMs?: number): Promise<RpcMessage>;
  /** A fresh request id. */
  nextId(): number;
  /** Whether the process (and the daemon behind it) still runs. */
  alive(): boolean;
  /**
   * Ends stdin and waits for the process to exit (killed after `timeoutMs`), then stops the daemon behind
   * it; resolves with the exit code of the process spoken to (the daemon's for `daemon`).
   */
  close(timeoutMs?: number): Promise<number | null>;
}

/** Starts the built server behind `target` and completes the MCP handshake. */
export async function startRawServer(args: string[] = [], target: Target = 'stdio'): Promise<RawServer> {
  const door = await openDoor(target, { args });
  const child = spawn(door.command, door.args, { env: door.env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error('server did not start');
  const messages: RpcMessage[] = [];
  let stderr = '';
  let pending = '';
  let exitCode: number | null | undefined;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') messages.push(JSON.parse(line) as RpcMessage);
      newline = pending.indexOf('\n');
    }
  });
  child.stdin.on('error', () => {});
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  let id = 0;
  const server: RawServer = {
    target,
    child,
    pid: door.daemonPid ?? child.pid,
    messages,
    stderr: () => stderr + door.daemonLog(),
    write: (text) =>
      new Promise((resolve, reject) => {
        child.stdin.write(text, (error) => (error ? reject(error) : resolve()));
      }),
    nextId: () => ++id,
    answer: (answerId, timeoutMs = 60_000) =>
      waitFor(
        () => messages.find((m) => m.id === answerId && (m.result !== undefined || m.error !== undefined)),
        { timeoutMs, what: `the answer to request ${String(answerId)}` },
      ),
    request: async (method, params, timeoutMs) => {
      const requestId = server.nextId();
      await server.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: requestId, method, ...(params === undefined ? {} : { params }) })}\n`,
      );
      return server.answer(requestId, timeoutMs);
    },
    alive: () => exitCode === undefined && (door.daemonPid === undefined || isAlive(door.daemonPid)),
    close: async (timeoutMs = 10_000) => {
      if (exitCode === undefined) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        await exited;
        clearTimeout(timer);
      }
      const daemonCode = await door.stop();
      return target === 'daemon' ? daemonCode : (exitCode ?? null);
    },
  };
  const init = await server.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'conch-raw-test', version: '0.0.0' },
  });
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  await server.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return server;
}

/** The structuredContent of a tools/call answer. */
export function structured(message: RpcMessage): Record<string, unknown> {
  return (message.result?.structuredContent ?? {}) as Record<string, unknown>;
}
