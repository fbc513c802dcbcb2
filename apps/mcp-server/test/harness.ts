/**
 * A small harness for integration tests against the REAL built server (`dist/bin.cjs`) over real stdio,
 * driven by the MCP SDK's own `Client` and `StdioClientTransport`.
 *
 *   const h = await startServer({ args: ['--log-level', 'debug'] });
 *   const r = await h.exec('echo hi');            // CommandResult (structuredContent)
 *   const e = await h.call('read_output', {...}); // any tool: { structured, text, isError, raw }
 *   await h.close();
 *
 * `tools/list` is called at start so that the SDK client validates every result against the tool's
 * declared output schema (errors included).
 */

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@conch/core/testing';
import { isAlive } from '@conch/node/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll } from 'vitest';
import { openDoor, type Target } from './targets.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The package root (apps/mcp-server). */
export const PACKAGE_DIR = resolve(here, '..');
/** The built server. */
export const BIN = resolve(PACKAGE_DIR, 'dist/bin.cjs');

/** Fails early with a clear message when the server has not been built. */
export function assertBuilt(): void {
  if (!existsSync(BIN)) {
    throw new Error(
      `${BIN} is missing: build first (npx -y pnpm@10.34.9 --filter @conch/mcp-server... build).`,
    );
  }
}

/** The CommandResult shape as the tests read it. */
export interface CommandResult {
  status: 'completed' | 'partial';
  command_id: string;
  session_id: string;
  output: string;
  exit_code?: number | null;
  signal?: string | null;
  state: string;
  reason: string;
  prompt?: { kind: string; text: string };
  cwd?: string;
  cwd_changed?: true;
  isolated?: boolean;
  duration_ms: number;
  /** The pause that ended a call that returned for silence (seconds). */
  pause_timeout?: number;
  /** Present only when the call cut the output. */
  output_info?: {
    bytes_total: number;
    lines_total: number;
    truncated: boolean;
    omitted_lines: number;
    log_path?: string;
  };
  page?: {
    from_line: number;
    to_line: number;
    total_lines: number;
    remaining_lines: number;
    dropped_lines: number;
  };
  screen?: {
    rows: string[];
    cursor: { row: number; col: number };
    alt_screen: boolean;
    cols: number;
    rows_count: number;
  };
  output_view?: 'screen';
  session_ended?: true;
  new_shell?: true;
}

/** The structuredContent of the `desktop-commander` profile's process tools, as the tests read it. */
export interface DcResult {
  pid: number;
  status: string;
  exit_code?: number | null;
  command_id: string;
  text: string;
}

/** The docs/tools.md error shape. */
export interface ErrorInfo {
  code: string;
  message: string;
  hint?: string;
  data?: Record<string, unknown>;
}

/** One tool call's outcome. */
export interface ToolCall<T = Record<string, unknown>> {
  raw: CallToolResult;
  isError: boolean;
  /** `structuredContent` (the result, or `{ error }`). */
  structured: T;
  /** The single text block. */
  text: string;
  /** `structuredContent.error` on error results. */
  error?: ErrorInfo;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Extra command-line flags. */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
  /** Working directory of the server. */
  cwd?: string;
  /** Flags for node itself (e.g. --cpu-prof), before the script. */
  nodeArgs?: string[];
  /**
   * A program (and its arguments) that runs node: e.g. `['unshare', '-m', 'sh', '-c', 'mount … && exec "$0" "$@"']`.
   * It must `exec` node, so that the transport's pid is the server's.
   */
  wrapper?: string[];
  /** Capabilities the client declares (default none), e.g. `{ elicitation: {} }`. */
  capabilities?: ClientCapabilities;
  /** Runs before the client connects: register request handlers (e.g. for `elicitation/create`). */
  setupClient?: (client: Client) => void;
  /** Which door to speak to (default `stdio`; see targets.ts). */
  target?: Target;
}

/** Options of one call. */
export interface CallOptions {
  /** Request timeout, ms (default 120 s). */
  timeoutMs?: number;
  /** Receives progress notifications (and sends a progress token). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  signal?: AbortSignal;
}

/** A running server and a connected client. */
export interface ServerHandle {
  client: Client;
  transport: StdioClientTransport;
  /** The engine's pid: the server's (`stdio`) or the daemon's (`daemon`, `relay`). */
  pid: number;
  /** The process the client speaks to (for EOF and exit tests). */
  child: ChildProcess;
  /** Everything the server (and the daemon behind it) wrote to stderr so far. */
  stderr(): string;
  /** The tools from tools/list. */
  tools: Tool[];
  call<T = Record<string, unknown>>(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<ToolCall<T>>;
  /** `execute`, expecting a CommandResult (throws on an error result). */
  exec(command: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CommandResult>;
  /** A tool that must succeed: returns its structuredContent (throws with the error text otherwise). */
  ok<T = CommandResult>(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<T>;
  /**
   * Closes the client (ends stdin; the transport escalates to SIGTERM/SIGKILL after 2 s each), then stops
   * the daemon behind it.
   */
  close(): Promise<void>;
}

/** Starts the built server with `options` (behind `options.target`) and connects a client. */
export async function startServer(options: StartOptions = {}): Promise<ServerHandle> {
  const door = await openDoor(options.target ?? 'stdio', {
    ...(options.args ? { args: options.args } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    ...(options.wrapper ? { wrapper: options.wrapper } : {}),
  });
  const transport = new StdioClientTransport({
    command: door.command,
    args: door.args,
    env: door.env,
    stderr: 'pipe',
    ...(door.cwd ? { cwd: door.cwd } : {}),
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client(
    { name: 'conch-test', version: '0.0.0' },
    options.capabilities ? { capabilities: options.capabilities } : undefined,
  );
  options.setupClient?.(client);
  await client.connect(transport);
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  const pid = door.daemonPid ?? transport.pid;
  if (pid === null || !child) throw new Error('server did not start');
  const { tools } = await client.listTools();
  let closed = false;

  const call = async <T>(
    name: string,
    args: Record<string, unknown> = {},
    callOptions: CallOptions = {},
  ): Promise<ToolCall<T>> => {
    const raw = (await client.callTool({ name, arguments: args }, undefined, {
      timeout: callOptions.timeoutMs ?? 120_000,
      ...(callOptions.onProgress ? { onprogress: callOptions.onProgress, resetTimeoutOnProgress: true } : {}),
      ...(callOptions.signal ? { signal: callOptions.signal } : {}),
    })) as CallToolResult;
    const texts = raw.content.filter((c) => c.type === 'text');
    const structured = (raw.structuredContent ?? {}) as T & { error?: ErrorInfo };
    const result: ToolCall<T> = {
      raw,
      isError: raw.isError === true,
      structured,
      text: texts.map((t) => (t as { text: string }).text).join('\n'),
    };
    if (structured.error) result.error = structured.error;
    return result;
  };

  const ok = async <T>(
    name: string,
    args: Record<string, unknown> = {},
    callOptions: CallOptions = {},
  ): Promise<T> => {
    const r = await call<T>(name, args, callOptions);
    if (r.isError) throw new Error(`${name} failed: ${r.text}`);
    return r.structured;
  };

  return {
    client,
    transport,
    pid,
    child,
    tools,
    stderr: () => stderr + door.daemonLog(),
    call,
    ok,
    exec: (command, args = {}, callOptions = {}) =>
      ok<CommandResult>('execute', { command, ...args }, callOptions),
    async close() {
      if (closed) return;
      closed = true;
      await client.close().catch(() => {});
      await door.stop();
    },
  };
}

/**
 * Keeps calling read_output until the command completes (or `maxCalls` calls). Returns every result;
 * the last is the completed one.
 */
export async function readUntilCompleted(
  h: ServerHandle,
  first: CommandResult,
  args: Record<string, unknown> = {},
  maxCalls = 50,
): Promise<CommandResult[]> {
  const results = [first];
  let current = first;
  while (current.status !== 'completed') {
    if (results.length > maxCalls)
      throw new Error(`${first.command_id} did not complete after ${maxCalls} calls`);
    current = await h.ok<CommandResult>('read_output', { command_id: first.command_id, ...args });
    results.push(current);
  }
  return results;
}

/**
 * A test file's working directory (`work`, a new directory named `prefix…`, for the servers' `--cwd`) and
 * the set of every OS pid its tests saw (`seenPids`). After the file's tests, all those processes must be
 * gone (the servers have closed) before the directory is removed.
 */
export function workAndSeenPids(prefix: string): { work: string; seenPids: Set<number> } {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const seenPids = new Set<number>();
  afterAll(async () => {
    await waitFor(() => [...seenPids].every((p) => !isAlive(p)), {
      timeoutMs: 20_000,
      what: 'no process left',
    });
    rmSync(work, { recursive: true, force: true });
  });
  return { work, seenPids };
}

/** The /proc helpers, from their one definition in `@conch/node/testing`. */
export { descendants, isAlive, pidsWithEnv, procStatusKb } from '@conch/node/testing';
