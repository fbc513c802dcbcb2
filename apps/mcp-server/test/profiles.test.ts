/**
 * The compatibility profiles end to end: the REAL built server (`dist/bin.cjs`) over stdio under
 * `--profile desktop-commander | astonish | ollama-code`, called with the original tools' names and the
 * argument values of their own documentation, checking the original result shapes and each behaviour
 * conch fixes. (interminal, which needs an sshd, is in profile-interminal.test.ts.)
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { findOpencode } from '@conch/delegate';
import { processStat } from '@conch/node/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type DcResult as Dc,
  descendants,
  isAlive,
  type ServerHandle,
  startServer,
  workAndSeenPids,
} from './harness.js';

/** Every OS pid a test saw; all must be gone once the servers closed. */
const { work, seenPids } = workAndSeenPids('conch-profiles-');

function propsOf(h: ServerHandle, tool: string): Record<string, { default?: unknown }> {
  const t = h.tools.find((x) => x.name === tool);
  if (!t) throw new Error(`${tool} is not listed`);
  return t.inputSchema.properties as Record<string, { default?: unknown }>;
}

function requiredOf(h: ServerHandle, tool: string): string[] {
  return (h.tools.find((x) => x.name === tool)?.inputSchema.required as string[] | undefined) ?? [];
}

/** Process group of a live pid. */
function pgidOf(pid: number): number {
  return processStat(pid)?.pgrp ?? Number.NaN;
}

// -------------------------------------------------------------------------------------------------
describe('--profile desktop-commander', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--profile', 'desktop-commander', '--cwd', work] });
  });
  afterAll(async () => h?.close());

  test('tools/list is exactly the Desktop Commander process tools, with their parameters and defaults', () => {
    expect(h.tools.map((t) => t.name)).toEqual([
      'start_process',
      'read_process_output',
      'interact_with_process',
      'force_terminate',
      'list_sessions',
    ]);
    expect(Object.keys(propsOf(h, 'start_process'))).toEqual(
      expect.arrayContaining(['command', 'timeout_ms', 'shell', 'verbose_timing']),
    );
    expect(requiredOf(h, 'start_process').sort()).toEqual(['command', 'timeout_ms']);
    const read = propsOf(h, 'read_process_output');
    expect(read.timeout_ms?.default).toBe(5000);
    expect(read.offset?.default).toBe(0);
    expect(read.length?.default).toBe(1000);
    const interact = propsOf(h, 'interact_with_process');
    expect(interact.timeout_ms?.default).toBe(8000);
    expect(interact.wait_for_prompt?.default).toBe(true);
    expect(requiredOf(h, 'force_terminate')).toEqual(['pid']);
  });

  test('a Python REPL: started, waiting for input (kernel evidence), answered, ended with its exit code', async () => {
    const started = await h.ok<Dc>('start_process', { command: 'python3 -i', timeout_ms: 10000 });
    seenPids.add(started.pid);
    expect(started.text).toMatch(/^Process started with PID \d+ \(shell: .+\)\nInitial output:\n/);
    expect(started.status).toBe('waiting_for_input');
    expect(started.text).toContain(`Process ${started.pid} is waiting for input`);
    const four = await h.ok<Dc>('interact_with_process', { pid: started.pid, input: 'print(2+2)' });
    expect(four.text).toMatch(new RegExp(`^✅ Input executed in process ${started.pid}:\\n\\n📤 Output:\\n`));
    expect(four.text).toContain('4');
    expect(four.status).toBe('waiting_for_input');
    const bye = await h.ok<Dc>('interact_with_process', { pid: started.pid, input: 'exit()' });
    expect(bye.status).toBe('finished');
    expect(bye.exit_code).toBe(0);
    expect(bye.text).toContain('Process completed with exit code 0');
  });

  test('the reply a process prints as it exits is kept, with the exit code (Desktop Commander lost both)', async () => {
    const started = await h.ok<Dc>('start_process', {
      command: `read -p 'Proceed? ' a; echo "answer=$a"; exit 3`,
      timeout_ms: 10000,
    });
    seenPids.add(started.pid);
    expect(started.status).toBe('waiting_for_input');
    const r = await h.ok<Dc>('interact_with_process', { pid: started.pid, input: 'yes' });
    expect(r.text).toContain('answer=yes');
    expect(r.status).toBe('finished');
    expect(r.exit_code).toBe(3);
    expect(r.text).toContain('Process completed with exit code 3');
  });

  test('a ">" at the end of the output is not a prompt: the process runs on to its end', async () => {
    const r = await h.ok<Dc>('start_process', {
      command: `printf 'building> '; sleep 1; echo built`,
      timeout_ms: 10000,
    });
    seenPids.add(r.pid);
    expect(r.status).toBe('finished');
    expect(r.text).toContain('built');
    expect(r.text).not.toContain('waiting for input');
    expect(r.text).toContain('Process completed with exit code 0');
  });

  test('read_process_output: absolute lines (offset > 0), tail (offset < 0), readable after the end', async () => {
    const r = await h.ok<Dc>('start_process', { command: 'seq 1 50', timeout_ms: 5000 });
    seenPids.add(r.pid);
    expect(r.status).toBe('finished');
    const page = await h.ok<Dc>('read_process_output', { pid: r.pid, offset: 10, length: 5 });
    expect(page.text).toBe(
      '[Reading 5 lines from line 10 (total: 50 lines, 35 remaining)]\n\n11\n12\n13\n14\n15\n\n✅ Process completed with exit code 0' +
        page.text.slice(page.text.indexOf(' (runtime:')),
    );
    const tail = await h.ok<Dc>('read_process_output', { pid: r.pid, offset: -3 });
    expect(tail.text.startsWith('[Reading last 3 lines (total: 50 lines)]\n\n48\n49\n50')).toBe(true);
    const again = await h.ok<Dc>('read_process_output', { pid: r.pid, offset: 10, length: 5 });
    expect(again.text).toBe(page.text);
  });

  test('read_process_output offset 0: what start_process showed comes again, then only what is new', async () => {
    const r = await h.ok<Dc>('start_process', {
      command: `echo one; read x; echo "two $x"; sleep 300`,
      timeout_ms: 5000,
    });
    seenPids.add(r.pid);
    expect(r.text).toContain('one');
    const sent = await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: 'go',
      wait_for_prompt: false,
    });
    expect(sent.text).toBe(`✅ Input sent to process ${r.pid}. Use read_process_output to get the response.`);
    // As in Desktop Commander, only read_process_output moves its "new output" cursor.
    const reads: string[] = [];
    await waitFor(async () => {
      const next = await h.ok<Dc>('read_process_output', { pid: r.pid, timeout_ms: 5000 });
      expect(next.text).toMatch(/^\[Reading \d+ new lines \(total: \d+ lines\)\]/);
      reads.push(next.text);
      return reads.join('\n').includes('two go');
    });
    expect(reads[0]).toMatch(/\bone\b/);
    expect(reads.join('\n').match(/\bone\b/g)).toHaveLength(1);
    const after = await h.ok<Dc>('read_process_output', { pid: r.pid, timeout_ms: 200 });
    expect(after.text).not.toMatch(/\bone\b|two go/);
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('list_sessions and force_terminate: the whole process tree goes', async () => {
    const r = await h.ok<Dc>('start_process', { command: 'sleep 300 & sleep 300', timeout_ms: 500 });
    seenPids.add(r.pid);
    expect(r.status).toBe('running');
    expect(r.text).toContain('Process is running. Use read_process_output to get more output.');
    const tree = [r.pid, ...descendants(r.pid)];
    for (const p of tree) seenPids.add(p);
    const list = await h.call('list_sessions', {});
    // Blocked: true = still running when start_process returned, as in Desktop Commander.
    expect(list.text).toMatch(new RegExp(`PID: ${r.pid}, Blocked: true, Runtime: \\d+s`));
    const killed = await h.call('force_terminate', { pid: r.pid });
    expect(killed.text).toBe(`Successfully initiated termination of session ${r.pid}`);
    await waitFor(() => tree.every((p) => !isAlive(p)), { timeoutMs: 10_000 });
    const again = await h.call('force_terminate', { pid: r.pid });
    expect(again.text).toMatch(new RegExp(`^No active session found for PID ${r.pid}`));
    const unknown = await h.call('read_process_output', { pid: 999999 });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('No session found for PID 999999');
  });
});

// -------------------------------------------------------------------------------------------------
describe('--profile astonish', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    const opencode = findOpencode();
    if (opencode === undefined) throw new Error('no opencode binary: install the workspace');
    h = await startServer({ args: ['--profile', 'astonish', '--cwd', work, '--opencode-bin', opencode] });
  });
  afterAll(async () => h?.close());

  interface Read {
    output: string;
    total_bytes: number;
    running: boolean;
    exit_code?: number | null;
  }

  test('tools/list is exactly the Astonish shell, process and delegate tools, with their parameters', () => {
    expect(h.tools.map((t) => t.name)).toEqual([
      'shell_command',
      'process_read',
      'process_write',
      'process_list',
      'process_kill',
      'delegate_task', // offered because an opencode binary is found (--opencode-bin)
    ]);
    expect(Object.keys(propsOf(h, 'delegate_task'))).toEqual(
      expect.arrayContaining(['task', 'dir', 'session_id', 'model', 'agent']),
    );
    const shell = propsOf(h, 'shell_command');
    expect(Object.keys(shell)).toEqual(['command', 'timeout', 'working_dir', 'background']);
    expect(shell.timeout?.default).toBe(120);
    expect((shell.timeout as { maximum?: number }).maximum).toBe(3600);
    expect(Object.keys(propsOf(h, 'process_read'))).toEqual(['session_id', 'offset']);
    expect(Object.keys(propsOf(h, 'process_write'))).toEqual(['session_id', 'input']);
    expect(Object.keys(propsOf(h, 'process_list'))).toEqual(['filter']);
    expect(Object.keys(propsOf(h, 'process_kill'))).toEqual(['session_id']);
  });

  test('shell_command returns the JSON fields stdout and exit_code', async () => {
    const r = await h.call('shell_command', { command: 'echo hello; sh -c "exit 4"', working_dir: work });
    expect(r.structured).toEqual({ stdout: 'hello', exit_code: 4 });
    expect(JSON.parse(r.text)).toEqual(r.structured);
  });

  test('waiting_for_input with a session_id, answered by process_write (only new output)', async () => {
    const r = await h.ok<{ waiting_for_input?: boolean; session_id?: string }>('shell_command', {
      command: `read -p 'Name: ' n; echo "hi-$n"`,
    });
    expect(r.waiting_for_input).toBe(true);
    expect(r.session_id).toMatch(/^c_/);
    const w = await h.ok<Read & { bytes_written: number }>('process_write', {
      session_id: r.session_id,
      input: 'bob\n',
    });
    expect(w.output).toContain('hi-bob');
    expect(w.output).not.toContain('Name:');
    expect(w.running).toBe(false);
    expect(w.exit_code).toBe(0);
    expect(w.bytes_written).toBe(4);
  });

  test('byte offsets stay absolute past 64 KiB (Astonish’s buffer wrapped there)', {
    timeout: 120_000,
  }, async () => {
    const line = (i: number) => `line ${String(i).padStart(5, '0')} 0123456789012345678901234567890123456789`;
    const lineBytes = line(1).length + 2; // a terminal ends lines with CR LF
    // The process stays alive after printing, so this checks offsets only (not output at exit).
    const r = await h.ok<{ session_id: string }>('shell_command', {
      command: `for i in $(seq 1 3000); do printf 'line %05d %s\\n' $i 0123456789012345678901234567890123456789; done; sleep 300`,
      background: true,
    });
    // Follow it as an Astonish agent does: each read starts at the previous total_bytes.
    let seen = '';
    let cursor = 0;
    await waitFor(
      async () => {
        const x = await h.ok<Read>('process_read', { session_id: r.session_id, offset: cursor });
        seen += x.output;
        cursor = x.total_bytes;
        return cursor >= 3000 * lineBytes;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(cursor).toBe(3000 * lineBytes);
    expect(seen).toBe(Array.from({ length: 3000 }, (_, i) => `${line(i + 1)}\n`).join(''));
    // An offset far past 64 KiB names the same byte it always did.
    const at = 70_000;
    const mid = await h.ok<Read>('process_read', { session_id: r.session_id, offset: at });
    const firstWhole = Math.ceil(at / lineBytes) + 1;
    expect(mid.output.split('\n')[1]).toBe(line(firstWhole));
    expect(mid.output.endsWith(`${line(3000)}\n`)).toBe(true);
    expect(mid.total_bytes).toBe(cursor);
    expect(mid.running).toBe(true);
    const none = await h.ok<Read>('process_read', { session_id: r.session_id, offset: cursor });
    expect(none.output).toBe('');
    expect(await h.ok('process_kill', { session_id: r.session_id })).toMatchObject({ status: 'killed' });
  });

  test('offset = previous total_bytes gives only the new output of a running process', async () => {
    const r = await h.ok<{ session_id: string }>('shell_command', {
      command: `echo first; read x; echo "second $x"; sleep 300`,
      background: true,
    });
    const first = await waitFor(async () => {
      const x = await h.ok<Read>('process_read', { session_id: r.session_id, offset: 0 });
      return x.output.includes('first') ? x : undefined;
    });
    await h.ok('process_write', { session_id: r.session_id, input: 'go' });
    const next = await h.ok<Read>('process_read', { session_id: r.session_id, offset: first.total_bytes });
    expect(next.output).toContain('second go');
    expect(next.output).not.toContain('first');
    expect(next.running).toBe(true);
    const listed = await h.ok<{ sessions: { session_id: string; pid: number }[]; count: number }>(
      'process_list',
      {
        filter: 'second',
      },
    );
    expect(listed.count).toBe(1);
    const pid = listed.sessions[0]?.pid as number;
    seenPids.add(pid);
    expect(await h.ok('process_kill', { session_id: r.session_id })).toEqual({ status: 'killed' });
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000 });
    const again = await h.ok<{ status: string }>('process_kill', { session_id: r.session_id });
    expect(again.status).toBe('already_exited');
  });

  test('process_list shows the original fields; timeout gives timed_out with a session_id', async () => {
    await h.ok('shell_command', { command: 'seq 2 4' });
    const listed = await h.ok<{ sessions: Record<string, unknown>[]; count: number }>('process_list', {
      filter: 'seq 2 4',
    });
    expect(listed.count).toBe(1);
    expect(listed.sessions[0]).toMatchObject({ command: 'seq 2 4', running: false, exit_code: 0 });
    expect(listed.sessions[0]?.duration).toMatch(/^(\d+h)?(\d+m)?\d+s$/);
    const slow = await h.ok<{ timed_out?: boolean; session_id?: string }>('shell_command', {
      command: 'sleep 300',
      timeout: 1,
    });
    expect(slow.timed_out).toBe(true);
    expect(await h.ok('process_kill', { session_id: slow.session_id })).toMatchObject({ status: 'killed' });
  });
});

// -------------------------------------------------------------------------------------------------
describe('--profile ollama-code', () => {
  let h: ServerHandle;
  let root: string;
  beforeAll(async () => {
    root = join(work, 'project');
    mkdirSync(join(root, 'scripts'), { recursive: true });
    writeFileSync(join(root, 'scripts', 'my_script.sh'), '#!/bin/sh\necho "script in $(pwd)"\n', {
      mode: 0o755,
    });
    h = await startServer({ args: ['--profile', 'ollama-code', '--cwd', root] });
  });
  afterAll(async () => h?.close());

  test('tools/list is exactly run_shell_command with its parameters', () => {
    expect(h.tools.map((t) => t.name)).toEqual(['run_shell_command']);
    expect(Object.keys(propsOf(h, 'run_shell_command'))).toEqual([
      'command',
      'description',
      'directory',
      'is_background',
    ]);
    expect(requiredOf(h, 'run_shell_command')).toEqual(['command']);
  });

  test('the documented examples give the original text block', async () => {
    const ls = await h.call('run_shell_command', { command: 'ls -la' });
    expect(ls.isError).toBe(false);
    expect(ls.text).toMatch(
      /^Command: ls -la\nDirectory: \(root\)\nStdout: total \d+[\s\S]*scripts\nStderr: \(empty\)\nError: \(none\)\nExit Code: 0\nSignal: \(none\)\nBackground PIDs: \(none\)$/,
    );
    const script = await h.call('run_shell_command', {
      command: './my_script.sh',
      directory: 'scripts',
      description: 'Run my custom script',
    });
    expect(script.text).toContain('Directory: scripts\n');
    expect(script.text).toContain(`Stdout: script in ${join(root, 'scripts')}\n`);
    // Like the original, the next command without a directory runs in the project root again.
    const pwd = await h.call('run_shell_command', { command: 'pwd' });
    expect(pwd.text).toContain(`Stdout: ${root}\n`);
    const failed = await h.call('run_shell_command', { command: 'sh -c "exit 3"' });
    expect(failed.text).toContain('Exit Code: 3\n');
  });

  test('a background command: its PID leads its own process group, kill -- -PID stops the whole tree', async () => {
    const bg = await h.call<{ background_pids: number[] }>('run_shell_command', {
      command: 'sleep 300 & sleep 300',
      description: 'Start development server in background',
      is_background: true,
    });
    expect(bg.structured.background_pids).toHaveLength(1);
    const pid = bg.structured.background_pids[0] as number;
    seenPids.add(pid);
    expect(bg.text).toContain(`Background PIDs: ${pid}`);
    expect(pgidOf(pid)).toBe(pid);
    const tree = [pid, ...descendants(pid)];
    for (const p of tree) seenPids.add(p);
    expect(tree.length).toBeGreaterThan(1);
    const kill = await h.call('run_shell_command', { command: `kill -- -${pid}` });
    expect(kill.text).toContain('Exit Code: 0');
    await waitFor(() => tree.every((p) => !isAlive(p)), { timeoutMs: 10_000 });
  });

  test('a command that waits for input is stopped and the Error line says why', async () => {
    const r = await h.call('run_shell_command', { command: `read -p 'Overwrite? ' a` });
    expect(r.text).toMatch(/Error: The command waited for input \("Overwrite\? ?"\) and was stopped/);
    expect(r.text).toContain('Stdout: Overwrite?');
  });
});

// -------------------------------------------------------------------------------------------------
describe('tools.core / tools.exclude (--policy-file) apply under every profile', () => {
  const cases: [string, string, (cmd: string) => Record<string, unknown>][] = [
    ['ollama-code', 'run_shell_command', (command) => ({ command })],
    ['desktop-commander', 'start_process', (command) => ({ command, timeout_ms: 5000 })],
    ['astonish', 'shell_command', (command) => ({ command })],
    ['interminal', 'execute', (command) => ({ command })],
  ];
  for (const [profile, tool, args] of cases) {
    test(profile, async () => {
      const settings = join(work, `settings-${profile}.json`);
      writeFileSync(
        settings,
        JSON.stringify({
          tools: { core: ['run_shell_command(echo)'], exclude: ['run_shell_command(echo secret)'] },
        }),
      );
      const h = await startServer({ args: ['--profile', profile, '--policy-file', settings, '--cwd', work] });
      try {
        const ok = await h.call(tool, args('echo allowed'));
        expect(ok.isError).toBe(false);
        expect(ok.text).toContain('allowed');
        for (const denied of ['ls', 'echo secret']) {
          const r = await h.call(tool, args(denied));
          expect(r.isError).toBe(true);
          expect(r.error?.code).toBe('POLICY_DENIED');
        }
      } finally {
        await h.close();
      }
    });
  }
});
