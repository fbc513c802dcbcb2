import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { assertBuilt, BIN, startServer } from './harness.js';

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assertBuilt();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

describe('conch-mcp command line and config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'conch-mcp-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('--help lists the flags on stderr (stdout is the protocol)', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    for (const flag of [
      '--shell',
      '--cwd',
      '--max-output-chars',
      '--config',
      '--allow',
      '--deny',
      '--log-level',
      '--profile',
    ]) {
      expect(r.stderr).toContain(flag);
    }
  });

  test('an unknown profile is a usage error listing the valid ones', async () => {
    const r = await run(['--profile', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nope/);
    for (const name of ['default', 'interminal', 'desktop-commander', 'astonish', 'ollama-code']) {
      expect(r.stderr).toContain(name);
    }
  });

  test('bad numbers and unknown flags are usage errors', async () => {
    expect((await run(['--max-sessions', 'many'])).code).toBe(2);
    expect((await run(['--no-such-flag'])).code).toBe(2);
    expect((await run(['--log-level', 'loud'])).stderr).toMatch(/error, warn, info, debug/);
    const lines = await run(['--max-output-lines', '5']);
    expect(lines.code).toBe(2);
    expect(lines.stderr).toContain('expected a whole number from 10 to 100000, got 5.');
  });

  test('--max-output-lines caps the lines of a call', async () => {
    const h = await startServer({ args: ['--max-output-lines', '10'] });
    try {
      const r = await h.call<{ output: string }>('execute', { command: 'seq 1 100' });
      expect(r.text.split('\n')).toEqual([
        expect.stringMatching(/^\[exit 0 · \d+ ms · command_id=c_\w+\]$/),
        '1',
        '2',
        '[… 90 lines omitted (lines 2-91) of 100 lines; read_output offset=2 to page through them]',
        ...Array.from({ length: 8 }, (_, k) => String(93 + k)),
      ]);
      expect(h.client.getInstructions()).toContain('and 10 lines;');
    } finally {
      await h.close();
    }
  });

  test('a config file with an unknown key is rejected, naming the key', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ shell: '/bin/bash', max_output_char: 100, policy: { allow: ['git'], permit: [] } }),
    );
    const r = await run(['--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('max_output_char');
    expect(r.stderr).toContain('permit');
    expect(r.stderr).toContain('max_output_chars');
  });

  test('a valid config file applies (flags win over it)', async () => {
    const file = join(dir, 'conch.config.json');
    writeFileSync(
      file,
      JSON.stringify({
        max_output_chars: 5000,
        default_output_chars: 2000,
        cwd: '.',
        log_level: 'debug',
        policy: { deny: ['rm'] },
      }),
    );
    const h = await startServer({ args: ['--config', file, '--default-output-chars', '3000'] });
    try {
      const execute = h.tools.find((t) => t.name === 'execute')!;
      const props = execute.inputSchema.properties as Record<string, { maximum?: number; default?: number }>;
      expect(props.max_output_chars?.maximum).toBe(5000);
      expect(props.max_output_chars?.default).toBe(3000);
      const pwd = await h.exec('pwd');
      expect(pwd.output).toBe(dir);
      const tooMuch = await h.call('execute', { command: 'echo x', max_output_chars: 6000 });
      expect(tooMuch.error?.code).toBe('INVALID_ARGUMENT');
      expect(h.stderr()).toMatch(/DEBUG/);
      // The file's policy rules are enforced.
      expect(h.stderr()).toMatch(/command policy active allow=0 deny=1/);
    } finally {
      await h.close();
    }
  });

  test('a conch.config.json in the working directory is not loaded implicitly', async () => {
    writeFileSync(join(dir, 'conch.config.json'), JSON.stringify({ max_output_chars: 5000 }));
    const h = await startServer({ cwd: dir });
    try {
      const execute = h.tools.find((t) => t.name === 'execute')!;
      const props = execute.inputSchema.properties as Record<string, { maximum?: number }>;
      expect(props.max_output_chars?.maximum).not.toBe(5000);
    } finally {
      await h.close();
    }
  });

  test('spill files are removed at shutdown, and kept with --keep-spill', async () => {
    for (const keep of [false, true]) {
      const spillDir = join(dir, keep ? 'spill-keep' : 'spill-remove');
      const h = await startServer({ args: ['--spill-dir', spillDir, ...(keep ? ['--keep-spill'] : [])] });
      // Small logs stay in memory; one over the spill buffer (64 KiB) gets its file.
      const small = await h.exec('seq 1 10');
      expect(small.output_info).toBeUndefined();
      const r = await h.exec('seq 1 20000');
      const logPath = r.output_info?.log_path;
      expect(logPath?.startsWith(spillDir)).toBe(true);
      expect(existsSync(logPath!)).toBe(true);
      await h.close();
      expect(existsSync(logPath!), `keep=${keep}`).toBe(keep);
      if (keep) expect(readFileSync(logPath!, 'utf8').split('\n').filter(Boolean)).toHaveLength(20000);
    }
  });

  test('a leading ~ in every path flag is the home directory (no shell expands it in a JSON config)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'conch-mcp-home-'));
    try {
      mkdirSync(join(home, 'project'));
      writeFileSync(join(home, 'policy.json'), JSON.stringify({ policy: { deny: ['shutdown'] } }));
      writeFileSync(join(home, 'conch.config.json'), JSON.stringify({ policy: { deny: ['rm'] } }));
      const h = await startServer({
        env: { HOME: home },
        args: [
          '--config',
          '~/conch.config.json',
          '--cwd',
          '~/project',
          '--policy-file',
          '~/policy.json',
          '--spill-dir',
          '~/spill',
          '--audit-log',
          '~/audit.jsonl',
        ],
      });
      try {
        expect((await h.exec('pwd')).output).toBe(join(home, 'project'));
        // Both the config file's rule and the policy file's rule are loaded.
        expect(h.stderr()).toMatch(/command policy active allow=0 deny=2/);
        const big = await h.exec('seq 1 20000');
        expect(big.output_info?.log_path?.startsWith(join(home, 'spill'))).toBe(true);
        expect(readFileSync(join(home, 'audit.jsonl'), 'utf8')).toContain('seq 1 20000');
      } finally {
        await h.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a leading ~ in the config file's paths is the home directory too", async () => {
    const home = mkdtempSync(join(tmpdir(), 'conch-mcp-home-'));
    try {
      mkdirSync(join(home, 'work'));
      const file = join(dir, 'tilde.config.json');
      writeFileSync(file, JSON.stringify({ cwd: '~/work', spill_dir: '~/spill' }));
      const h = await startServer({ env: { HOME: home }, args: ['--config', file] });
      try {
        expect((await h.exec('pwd')).output).toBe(join(home, 'work'));
        const big = await h.exec('seq 1 20000');
        expect(big.output_info?.log_path?.startsWith(join(home, 'spill'))).toBe(true);
      } finally {
        await h.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('every start-up error names the flag and the value, and exits 2', async () => {
    const home = mkdtempSync(join(tmpdir(), 'conch-mcp-home-'));
    try {
      writeFileSync(join(home, 'file.txt'), 'not a directory');
      writeFileSync(join(home, 'broken.json'), '{');
      const cases: [string[], string][] = [
        [['--cwd', '/nope'], '--cwd: /nope: no such directory'],
        [['--cwd', '~/missing'], `--cwd: ${join(home, 'missing')}: no such directory`],
        [['--cwd', '~/file.txt'], `--cwd: ${join(home, 'file.txt')}: not a directory`],
        [['--config', '~/none.json'], `--config: ${join(home, 'none.json')}: no such file or directory`],
        [['--config', '~/broken.json'], `--config: ${join(home, 'broken.json')} is not valid JSON`],
        [
          ['--policy-file', '~/none.json'],
          `--policy-file: ${join(home, 'none.json')}: no such file or directory`,
        ],
        [['--policy-file', '~/broken.json'], `--policy-file: ${join(home, 'broken.json')}`],
        [['--max-sessions', 'many'], "'--max-sessions <n>' argument 'many' is invalid"],
        [
          ['--max-output-chars', '1000', '--default-output-chars', '2000'],
          '--default-output-chars: 2000 exceeds --max-output-chars (1000)',
        ],
      ];
      for (const [args, message] of cases) {
        const r = await run(args, { HOME: home });
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toContain(message);
        expect(r.stdout).toBe('');
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
