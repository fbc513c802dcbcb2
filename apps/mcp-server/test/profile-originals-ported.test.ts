/**
 * The shell and process tests of the other originals, rewritten to run over MCP against the REAL built
 * server under their profile:
 * - Astonish (Go): `pkg/tools/shell_command_test.go` and `pkg/tools/process_mgr_test.go` (the tests of
 *   `shell_command` and of the process manager behind `process_*`), under `--profile astonish`;
 * - Ollama Code / Gemini CLI: `integration-tests/run_shell_command.test.ts`, which drives the CLI through a
 *   model; here each case calls `run_shell_command` directly, with the same settings (`tools.core`) given
 *   as conch's `--policy-file`, under `--profile ollama-code`.
 * interminal's repository has no tests of its tools (its CI only imports the module).
 *
 * Where conch deliberately differs (docs/profiles.md), the test checks conch's side and says so.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isAlive, type ServerHandle, startServer, workAndSeenPids } from './harness.js';

/** Every process a test started: all must be gone once the servers closed. */
const { work, seenPids } = workAndSeenPids('conch-originals-ported-');

// -------------------------------------------------------------------------------------------------
describe('Astonish: pkg/tools/shell_command_test.go', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--profile', 'astonish', '--cwd', work] });
  });
  afterAll(async () => h?.close());

  interface Shell {
    stdout: string;
    exit_code?: number;
    timed_out?: boolean;
    waiting_for_input?: boolean;
    session_id?: string;
  }
  const shell = (args: Record<string, unknown>) => h.ok<Shell>('shell_command', args);

  test('Echo', async () => {
    const r = await shell({ command: 'echo hello world' });
    expect(r.stdout.trim()).toBe('hello world');
    expect(r.timed_out).toBeFalsy();
  });

  test('WorkingDir', async () => {
    const dir = mkdtempSync(join(work, 'wd-'));
    writeFileSync(join(dir, 'marker.txt'), 'found');
    const r = await shell({ command: 'cat marker.txt', working_dir: dir });
    expect(r.stdout.trim()).toBe('found');
  });

  test('ExitNonZero and PTY_ExitCode: the exit code is in the result, not an error', async () => {
    // `exit` ends the session's shell (conch runs commands in a persistent session); its status is reported.
    for (const code of [1, 42]) {
      const r = await h.call<Shell>('shell_command', { command: `exit ${code}` });
      expect(r.isError, `exit ${code}`).toBe(false);
      expect(r.structured.exit_code).toBe(code);
    }
  });

  test('StderrInOutput: a terminal merges stderr into the output', async () => {
    const r = await shell({ command: 'echo error_msg >&2 && exit 1' });
    expect(r.stdout).toContain('error_msg');
    expect(r.exit_code).toBe(1);
  });

  test('TimeoutDefault: without a timeout the default (120 s) applies', async () => {
    const r = await shell({ command: 'echo quick' });
    expect(r.stdout.trim()).toBe('quick');
    expect(r.exit_code).toBe(0);
    // Astonish reads `timeout: 0` (Go's zero) as the default; in conch 0 is "return at once", as everywhere.
    const zero = await shell({ command: 'sleep 300', timeout: 0 });
    expect(zero.timed_out).toBe(true);
    await h.ok('process_kill', { session_id: zero.session_id });
  });

  test('TimeoutExceeded: timed_out, and the command keeps running under its session_id', async () => {
    const r = await shell({ command: 'sleep 300', timeout: 1 });
    expect(r.timed_out).toBe(true);
    expect(r.session_id).toMatch(/^c_/);
    expect(await h.ok('process_kill', { session_id: r.session_id })).toMatchObject({ status: 'killed' });
  });

  test('TimeoutClamped: a timeout over 3600 is refused naming the range (Astonish clamped it), 3600 runs', async () => {
    const over = await h.call('shell_command', { command: 'echo clamped', timeout: 9999 });
    expect(over.error?.code).toBe('INVALID_ARGUMENT');
    expect(over.text).toContain('9999');
    expect(over.text).toContain('3600');
    const r = await shell({ command: 'echo clamped', timeout: 3600 });
    expect(r.stdout.trim()).toBe('clamped');
  });

  test('MultilineOutput', async () => {
    const r = await shell({ command: "printf 'line1\\nline2\\nline3\\n'" });
    expect(r.stdout.trim().split('\n')).toEqual(['line1', 'line2', 'line3']);
  });

  test('PTY_Echo: a one-shot command is neither waiting for input nor left with a session_id', async () => {
    const r = await shell({ command: "echo 'pty test output'" });
    expect(r.stdout).toContain('pty test output');
    expect(r.waiting_for_input).toBeFalsy();
    expect(r.session_id).toBeUndefined();
  });

  test('PTY_Background: a background command gets a session_id', async () => {
    const r = await shell({ command: 'sleep 60', background: true });
    expect(r.session_id).toMatch(/^c_/);
    expect(await h.ok('process_kill', { session_id: r.session_id })).toMatchObject({ status: 'killed' });
  });
});

// -------------------------------------------------------------------------------------------------
describe('Astonish: pkg/tools/process_mgr_test.go', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ args: ['--profile', 'astonish', '--cwd', work] });
  });
  afterAll(async () => h?.close());

  interface Read {
    output: string;
    total_bytes: number;
    running: boolean;
    exit_code?: number | null;
  }
  interface Listed {
    sessions: { session_id: string; pid: number; running: boolean; command: string }[];
    count: number;
  }
  const background = async (command: string) => {
    const r = await h.ok<{ session_id: string }>('shell_command', { command, background: true });
    expect(r.session_id).toMatch(/^c_/);
    return r.session_id;
  };

  test('StartAndWait: a started process ends, its output readable', async () => {
    const id = await background('echo hello');
    const read = await waitFor(async () => {
      const x = await h.ok<Read>('process_read', { session_id: id, offset: 0 });
      return x.running ? undefined : x;
    });
    expect(read.output).toContain('hello');
    expect(read.exit_code).toBe(0);
  });

  test('BackgroundAndKill: running, then killed and no longer running', async () => {
    const id = await background('sleep 60');
    const listed = await h.ok<Listed>('process_list', { filter: id });
    const pid = listed.sessions[0]?.pid as number;
    seenPids.add(pid);
    expect(listed.sessions[0]?.running).toBe(true);
    expect(await h.ok('process_kill', { session_id: id })).toMatchObject({ status: 'killed' });
    expect((await h.ok<Read>('process_read', { session_id: id, offset: 0 })).running).toBe(false);
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000 });
  });

  test('List: two started processes are listed', async () => {
    const ids = [await background('sleep 61'), await background('sleep 61')];
    const listed = await h.ok<Listed>('process_list', { filter: 'sleep 61' });
    expect(listed.count).toBe(2);
    expect(listed.sessions.map((s) => s.session_id).sort()).toEqual([...ids].sort());
    for (const id of ids) await h.ok('process_kill', { session_id: id });
  });

  test('WriteAndRead: what is written to cat comes back', async () => {
    const id = await background('cat');
    await h.ok('process_write', { session_id: id, input: 'hello world\n' });
    const read = await waitFor(async () => {
      const x = await h.ok<Read>('process_read', { session_id: id, offset: 0 });
      return x.output.split('hello world').length > 2 ? x : undefined;
    });
    // The terminal echoes the typed line, then cat prints it.
    expect(read.output).toContain('hello world\nhello world');
    await h.ok('process_kill', { session_id: id });
  });

  test('LooksLikePrompt: waiting_for_input when the process reads its terminal after these prompts', async () => {
    for (const prompt of [
      'Are you sure you want to continue connecting (yes/no/[fingerprint])? ',
      "root@host's password:",
      '[sudo] password for user: ',
      'Do you want to continue? [Y/n] ',
      'user@host:~$ ',
      'Enter your name? ',
      'Username: ',
    ]) {
      const r = await h.ok<{ waiting_for_input?: boolean; session_id?: string }>('shell_command', {
        command: `printf '%s' ${JSON.stringify(prompt).replaceAll('$', '\\$')}; read -r answer`,
        timeout: 30,
      });
      expect(r.waiting_for_input, prompt).toBe(true);
      await h.ok('process_kill', { session_id: r.session_id });
    }
  });

  test('LooksLikePrompt: not waiting for input after output that is no prompt (conch: nothing is reading)', async () => {
    for (const [name, text] of [
      ['normal_output', 'total 48\\ndrwxr-xr-x 5 user staff 160 Feb 22 10:00 .'],
      ['empty', ''],
      ['long_last_line', 'x'.repeat(250)],
    ]) {
      const r = await h.ok<{ waiting_for_input?: boolean; timed_out?: boolean; session_id?: string }>(
        'shell_command',
        { command: `printf '${text}'; sleep 300`, timeout: 1 },
      );
      expect(r.waiting_for_input, name).toBeFalsy();
      expect(r.timed_out, name).toBe(true);
      await h.ok('process_kill', { session_id: r.session_id });
    }
  });
});

// -------------------------------------------------------------------------------------------------
describe('Ollama Code / Gemini CLI: integration-tests/run_shell_command.test.ts', () => {
  const servers: ServerHandle[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  /** A server under `--profile ollama-code` with these settings (as the original's `tools` settings). */
  async function ollama(name: string, tools?: Record<string, string[]>, env?: Record<string, string>) {
    const root = join(work, name);
    mkdirSync(root, { recursive: true });
    const args = ['--profile', 'ollama-code', '--cwd', root];
    if (tools) {
      const settings = join(work, `${name}.settings.json`);
      writeFileSync(settings, JSON.stringify({ tools }));
      args.push('--policy-file', settings);
    }
    const h = await startServer({ args, ...(env ? { env } : {}) });
    servers.push(h);
    return { h, root };
  }
  const run = (h: ServerHandle, command: string) => h.call('run_shell_command', { command });

  test('should be able to run a shell command', async () => {
    const { h } = await ollama('basic', { core: ['run_shell_command'] });
    const r = await run(h, 'echo hello-world');
    expect(r.isError).toBe(false);
    expect(r.text).toContain('Stdout: hello-world\n');
    expect(r.text).toContain('Exit Code: 0\n');
  });

  test('should preserve trailing newlines for heredoc shell commands', async () => {
    const { h } = await ollama('heredoc', { core: ['run_shell_command'] });
    const command = "cat <<'EOF'\nTRAILING_NEWLINE_20755\nEOF\n";
    const r = await run(h, command);
    expect(r.text).toContain('TRAILING_NEWLINE_20755');
    expect(r.text).not.toMatch(
      /here-document delimited by end-of-file|syntax error: unexpected end of file/i,
    );
    expect(r.text).toContain('Exit Code: 0\n');
  });

  test('should succeed in yolo mode: wc -l counts the lines of a file', async () => {
    const { h, root } = await ollama('yolo', { core: ['run_shell_command'] });
    writeFileSync(join(root, 'test.txt'), 'Lorem\nIpsum\nDolor\n');
    const r = await run(h, 'wc -l test.txt');
    expect(r.text).toContain('Stdout: 3 test.txt\n');
  });

  test('should reject commands not on the allowlist', async () => {
    const { h, root } = await ollama('allowlist', { core: ['run_shell_command(ls)'] });
    const file = join(root, 'test.txt');
    writeFileSync(file, 'Disallowed command check\n');
    const denied = await run(h, `node -e "console.log(require('fs').readFileSync('${file}', 'utf8'))"`);
    expect(denied.isError).toBe(true);
    expect(denied.error?.code).toBe('POLICY_DENIED');
    expect(denied.text).not.toContain('Disallowed command check');
    expect((await run(h, 'ls')).text).toContain('test.txt');
  });

  test('should reject chained commands when only the first segment is allowlisted', async () => {
    const { h } = await ollama('chained', { core: ['run_shell_command(echo)'] });
    const r = await run(h, 'echo "foo" && ls');
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect((await run(h, 'echo "foo"')).text).toContain('Stdout: foo\n');
  });

  test('should allow all with "run_shell_command" and other specific tools', async () => {
    const { h } = await ollama('allow-all', { core: ['run_shell_command(wc)', 'run_shell_command'] });
    const r = await run(h, 'echo test-allow-all');
    expect(r.isError).toBe(false);
    expect(r.text).toContain('Stdout: test-allow-all\n');
  });

  test('should propagate environment variables to the child process', async () => {
    const value = `test-value-${Math.random().toString(36).slice(2, 9)}`;
    const { h } = await ollama('env', { core: ['run_shell_command'] }, { GEMINI_CLI_TEST_VAR: value });
    const r = await run(h, 'echo "$GEMINI_CLI_TEST_VAR"');
    expect(r.text).toContain(`Stdout: ${value}\n`);
  });

  test('rejects invalid shell expressions', async () => {
    const { h } = await ollama('invalid', {
      core: ['run_shell_command'],
      allowed: ['run_shell_command(echo)'],
    });
    const r = await run(h, 'echo "hello" > > file');
    // The original's tool call fails. Here the policy reads it as a syntax error and refuses it: nothing runs.
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.text).toContain('bash syntax error');
  });
});
