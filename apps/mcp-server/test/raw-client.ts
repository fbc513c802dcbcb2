/**
 * A raw JSON-RPC client for the BUILT server over stdio, for framing tests: it writes arbitrary bytes (not
 * only valid messages) and collects every line the server answers.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { assertBuilt, BIN, waitFor } from './harness.js';

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
  child: ChildProcess;
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
  /** Whether the process still runs. */
  alive(): boolean;
  /** Ends stdin and waits for the process to exit; kills it after `timeoutMs`. */
  close(timeoutMs?: number): Promise<number | null>;
}

/** Starts the built server and completes the MCP handshake. */
export async function startRawServer(args: string[] = []): Promise<RawServer> {
  assertBuilt();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
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
    child,
    pid: child.pid,
    messages,
    stderr: () => stderr,
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
    alive: () => exitCode === undefined,
    close: async (timeoutMs = 10_000) => {
      if (exitCode !== undefined) return exitCode;
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
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
