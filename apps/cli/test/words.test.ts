/**
 * The CLI's words: the CLI declares its vocabulary when it connects to the daemon, and the daemon words
 * hints, errors and the omission notice in it (`conch kill`, not `kill_process`); nothing is reworded by
 * the CLI afterwards. The MCP face keeps tool names (apps/mcp-server tests).
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, createHome, isRunning } from './harness.js';

let home: CliHome;
let foreground: ChildProcess | undefined;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
  const pid = foreground?.pid;
  if (pid !== undefined) await waitFor(() => !isRunning(pid), { what: 'the foreground daemon is gone' });
  foreground = undefined;
});

/** MCP tool names that must never reach a person using the CLI. */
const TOOL_NAMES = /\b(read_output|kill_process|list_processes|send_control|close_session|list_sessions)\b/;

describe('the CLI words hints with its own commands', () => {
  it('a partial exec prints the still-running hint with conch read and conch kill', async () => {
    const run = await home.conch(['exec', '--pause', '0.3', '--', 'sleep 30']);
    expect(run.code).toBe(0);
    const id = /still running: (c_[a-z0-9]+)/.exec(run.stderr)?.[1];
    expect(id).toBeDefined();
    expect(run.stderr).toContain(
      `[still running: ${id}] read more with conch read ${id}, stop it with conch kill ${id}\n`,
    );
    await home.conch(['kill', id as string]);
  });

  it('an error hint names conch ps, not list_processes', async () => {
    const unknown = await home.conch(['read', 'c_nosuchid00']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'The id is unknown or was pruned (finished > 30 min ago or beyond the newest 200); conch ps shows valid ids.',
    );
    expect(unknown.stderr).not.toMatch(TOOL_NAMES);
  });

  it('the live-command limit hint says conch kill (conch ps shows them)', async () => {
    const config = join(home.dir, 'conch.config.json');
    writeFileSync(config, JSON.stringify({ max_commands: 1 }));
    foreground = spawn(process.execPath, [BIN, 'daemon', 'run', '--config', config], {
      env: home.env,
      stdio: 'ignore',
    });
    await waitFor(() => home.daemonPid() === foreground?.pid, { what: 'the configured daemon answers' });
    expect((await home.conch(['exec', '--background', '--', 'sleep 30'])).code).toBe(0);
    const refused = await home.conch(['exec', '--background', '--', 'sleep 31']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Kill finished-with background commands with conch kill (conch ps shows them).',
    );
    expect(refused.stderr).not.toMatch(TOOL_NAMES);
  });

  it('the omission notice of a long output names conch read', async () => {
    const run = await home.conch(['exec', '--', 'seq 1 5000']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/; conch read offset=\d+ to page through them/);
    expect(run.stdout).not.toMatch(TOOL_NAMES);
  });
});
