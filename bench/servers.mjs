// The MCP servers compared by mcp-round-trip.mjs and memory.mjs: conch-mcp (built from this repo) and
// two alternatives installed from npm as devDependencies of @conch/bench. Each runs with HOME and its
// working directory in a private temp dir, and with the same minimal environment. Desktop Commander's
// telemetry is disabled (env kill switch and config), its feature-flag URL points at a closed loopback
// port, and onboarding is off: it gets no network and touches only the temp dir.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  BENCH_DIR,
  BENCH_RUN,
  CONCH_MCP_BIN,
  descendants,
  isAlive,
  killTree,
  sleep,
  withCap,
} from './lib.mjs';

const NOOP_MCP_BIN = join(BENCH_DIR, 'noop-mcp-server.mjs');
const MCP_COMMANDS_BIN = join(BENCH_DIR, 'node_modules', 'mcp-server-commands', 'build', 'index.js');
const DESKTOP_COMMANDER_BIN = join(
  BENCH_DIR,
  'node_modules',
  '@wonderwhy-er',
  'desktop-commander',
  'dist',
  'index.js',
);

/** Text of a tool result (all text parts joined). */
export function resultText(result) {
  return (result?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/**
 * The server definitions, for a private temp dir `dir` (HOME and cwd of every server).
 * `run(cmd, opts)` gives the tool call for a shell command; `ok(result)` checks an `echo hi` answer.
 */
export function serverDefs(dir) {
  const home = join(dir, 'home');
  const cwd = join(dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const dcConfigDir = join(home, '.claude-server-commander');
  mkdirSync(dcConfigDir, { recursive: true });
  writeFileSync(
    join(dcConfigDir, 'config.json'),
    JSON.stringify(
      {
        telemetryEnabled: false,
        pendingWelcomeOnboarding: false,
        welcomeOnboardingEligible: false,
        allowedDirectories: [dir],
        blockedCommands: [],
        defaultShell: '/bin/bash',
      },
      null,
      2,
    ),
  );
  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: process.env.LANG ?? 'C.UTF-8',
    SHELL: '/bin/bash',
    TMPDIR: dir,
    CONCH_BENCH_RUN: BENCH_RUN,
  };
  return [
    {
      name: 'conch-mcp',
      available: existsSync(CONCH_MCP_BIN),
      missing: `${CONCH_MCP_BIN} is missing: build it with \`npx -y pnpm@10.34.9 --filter @conch/mcp-server build\``,
      command: process.execPath,
      args: [CONCH_MCP_BIN, '--shell', '/bin/bash', '--cwd', cwd],
      cwd,
      env,
      tool: 'execute',
      // A session of its own (random id) rather than "default": conch kills escaped processes by their
      // CONCH_SESSION_ID when a session closes, and every conch server's default session has the same id.
      prepare: async (client) => {
        const r = await client.callTool({ name: 'create_local', arguments: { shell: '/bin/bash', cwd } });
        const id = r.structuredContent?.session_id;
        if (r.isError || typeof id !== 'string')
          throw new Error(`create_local failed: ${resultText(r).slice(0, 200)}`);
        return { session_id: id };
      },
      run: (command, { timeoutS } = {}, ctx = {}) => ({
        command,
        ...(ctx.session_id ? { session_id: ctx.session_id } : {}),
        ...(timeoutS ? { pause_timeout: timeoutS, total_timeout: timeoutS } : {}),
      }),
      ok: (r) => !r.isError && /\bhi\b/.test(resultText(r)),
    },
    {
      name: 'mcp-server-commands',
      note: 'no PTY, no sessions: child_process.exec per call',
      available: existsSync(MCP_COMMANDS_BIN),
      missing: 'mcp-server-commands is not installed (devDependency of @conch/bench)',
      command: process.execPath,
      args: [MCP_COMMANDS_BIN],
      cwd,
      env,
      tool: 'run_command',
      run: (command) => ({ command, workdir: cwd }),
      ok: (r) => !r.isError && /\bhi\b/.test(resultText(r)),
    },
    {
      name: 'desktop-commander',
      note: 'start_process: child_process.spawn per call, output kept in memory',
      available: existsSync(DESKTOP_COMMANDER_BIN),
      missing: '@wonderwhy-er/desktop-commander is not installed (devDependency of @conch/bench)',
      command: process.execPath,
      args: [DESKTOP_COMMANDER_BIN, '--no-onboarding'],
      cwd,
      env: {
        ...env,
        DESKTOP_COMMANDER_DISABLE_TELEMETRY: '1',
        DC_FLAG_URL: 'http://127.0.0.1:9/flags.json',
      },
      tool: 'start_process',
      run: (command, { timeoutS } = {}) => ({ command, timeout_ms: (timeoutS ?? 30) * 1000 }),
      ok: (r) => !r.isError && /\bhi\b/.test(resultText(r)),
    },
  ];
}

/**
 * The MCP floor (noop-mcp-server.mjs): a plain SDK `McpServer` whose tool `execute {command}` runs nothing
 * and answers one line; with the environment and cwd of `base` (conch-mcp's definition). `floor: true`
 * marks a candidate that can only answer `execute` (no shell behind it).
 */
export function mcpFloorDef(base, name) {
  return {
    name,
    floor: true,
    note: 'no shell: what any tool call over MCP stdio with the same SDK costs',
    available: existsSync(NOOP_MCP_BIN),
    missing: `${NOOP_MCP_BIN} is missing`,
    command: process.execPath,
    args: [NOOP_MCP_BIN],
    cwd: base.cwd,
    env: base.env,
    tool: 'execute',
    run: (command) => ({ command }),
    ok: (r) => !r.isError,
  };
}

/**
 * Starts a server and connects an MCP client; checks that its tool exists. Returns
 * `{ def, client, transport, pid, startMs, stderr() }`. Throws (after cleaning up) on failure.
 */
export async function startServer(def, { capMs = 30_000 } = {}) {
  const transport = new StdioClientTransport({
    command: def.command,
    args: def.args,
    cwd: def.cwd,
    env: def.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  const client = new Client({ name: 'conch-bench', version: '0.0.0' });
  const t0 = performance.now();
  try {
    await withCap(client.connect(transport), capMs, `${def.name} start`);
    const startMs = performance.now() - t0;
    const { tools } = await withCap(client.listTools(), capMs, `${def.name} tools/list`);
    if (!tools.some((t) => t.name === def.tool)) {
      throw new Error(`${def.name} has no tool ${def.tool} (has ${tools.map((t) => t.name).join(', ')})`);
    }
    const ctx = def.prepare ? await withCap(def.prepare(client), capMs, `${def.name} prepare`) : {};
    return { def, client, transport, pid: transport.pid, startMs, ctx, stderr: () => stderr };
  } catch (error) {
    const pid = transport.pid;
    await client.close().catch(() => undefined);
    if (pid) killTree(pid);
    const tail = stderr.trim().split('\n').slice(-3).join(' | ');
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}${tail ? ` (stderr: ${tail})` : ''}`,
    );
  }
}

/** Calls the server's shell tool for `command`. */
export function callShell(server, command, { timeoutS, capMs = 60_000 } = {}) {
  return withCap(
    server.client.callTool(
      { name: server.def.tool, arguments: server.def.run(command, { timeoutS }, server.ctx) },
      undefined,
      {
        timeout: capMs,
      },
    ),
    capMs + 1000,
    `${server.def.name} ${command}`,
  );
}

/**
 * Closes the client (stdin EOF, then SIGTERM, then SIGKILL from the SDK), waits up to 3 s for the
 * server and everything it started to go, and SIGKILLs what is left. Returns what it had to kill.
 */
export async function stopServer(server) {
  const pid = server.pid;
  const before = pid ? descendants(pid) : [];
  const t0 = performance.now();
  await withCap(server.client.close(), 10_000, `${server.def.name} close`).catch(() => undefined);
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline && ((pid && isAlive(pid)) || before.some(isAlive))) await sleep(50);
  const exitMs = performance.now() - t0;
  const serverAlive = pid ? isAlive(pid) : false;
  const leftovers = before.filter(isAlive);
  let killed = 0;
  if (serverAlive && pid) killed += killTree(pid);
  for (const p of leftovers) {
    try {
      process.kill(p, 'SIGKILL');
      killed++;
    } catch {
      // gone
    }
  }
  // The SDK ends stdin, waits 2 s, then sends SIGTERM, then SIGKILL after 2 s more.
  const how = serverAlive
    ? 'killed by the bench'
    : exitMs < 1950
      ? 'stdin EOF'
      : exitMs < 3950
        ? 'SIGTERM'
        : 'SIGKILL';
  return { exitMs, serverAlive, exitedOn: how, leftovers: leftovers.length, killed };
}
