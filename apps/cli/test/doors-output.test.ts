/**
 * What the CLI prints and takes: agent-controlled text in tables and status lines cannot drive the
 * person's terminal, a listing of commands stays within the transport's line limit whatever their size,
 * and arguments that are not UTF-8 are refused instead of being changed.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type CliHome, createHome, relayClient } from './harness.js';

let home: CliHome;
beforeEach(() => {
  home = createHome();
});
afterEach(async () => {
  await home.dispose();
});

/** Every control character a terminal acts on: C0 (but newline), DEL, C1. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('agent-controlled text in tables and status lines is escaped', () => {
  it('a command text cannot rewrite rows of conch ps, set the title or write the clipboard', async () => {
    // A harmless command whose text carries: cursor up + erase line + a fake row, an OSC title, OSC 52, a C1 CSI.
    const evil =
      'sleep 30 #\u001b[1A\u001b[2K\rc_fake  default  1  running  -  0.0s  ls -la\u001b]0;pwned\u0007\u001b]52;c;ZXZpbA==\u0007\u009b2J';
    const started = await home.conch(['exec', '--background', '--', evil]);
    expect(started.code).toBe(0);
    const ps = await home.conch(['ps']);
    expect(ps.code).toBe(0);
    expect(ps.stdout).not.toMatch(CONTROL);
    expect(ps.stdout).toContain('\\x1b]52;c;ZXZpbA==\\x07');
    expect(ps.stdout).toContain('\\x9b2J');
    // One row per command: the fake row is part of the real one.
    expect(ps.stdout.trim().split('\n')).toHaveLength(2);
    // --json stays valid JSON and carries no raw control either.
    const json = await home.conch(['ps', '--json']);
    expect(json.stdout).not.toMatch(CONTROL);
    expect((JSON.parse(json.stdout) as { processes: { command: string }[] }).processes[0]?.command).toBe(
      evil,
    );
  });

  it('a session name and a cwd cannot drive the terminal through conch sessions', async () => {
    const dir = join(home.dir, 'dir\u001b[31mred\u009b2J');
    mkdirSync(dir);
    const { client } = await relayClient(home);
    try {
      const created = await client.callTool({
        name: 'create_local',
        arguments: { name: 'evil\u001b[2J\u009d0;pwned\u009c', cwd: dir },
      });
      expect(created.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    const sessions = await home.conch(['sessions']);
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toContain('evil\\x1b[2J\\x9d0;pwned\\x9c');
    expect(sessions.stdout).toContain('dir\\x1b[31mred\\x9b2J');
    expect(sessions.stdout).not.toMatch(CONTROL);
  });

  it('an error message naming agent text is escaped', async () => {
    const run = await home.conch(['read', 'c_\u009b2J\u009d0;pwned\u009c']);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(CONTROL);
  });
});

describe('a listing of commands stays within the line limit', () => {
  it('twenty-eight 100 KB command texts: conch ps and list_processes answer, each text cut and said so', async () => {
    const quotes = '"'.repeat(100_000);
    const { client } = await relayClient(home);
    try {
      for (let i = 0; i < 28; i++) {
        const r = await client.callTool({ name: 'execute', arguments: { command: `true '${quotes}' ${i}` } });
        expect(r.isError, JSON.stringify(r.content).slice(0, 300)).not.toBe(true);
      }
      const listed = await client.callTool({ name: 'list_processes', arguments: {} });
      const processes = (
        listed.structuredContent as { processes: { command: string; command_chars?: number }[] }
      ).processes;
      expect(processes).toHaveLength(28);
      for (const p of processes) {
        expect(p.command_chars).toBeGreaterThan(100_000);
        expect(p.command.endsWith('…')).toBe(true);
        expect(p.command.length).toBeLessThan(p.command_chars as number);
      }
    } finally {
      await client.close();
    }
    const ps = await home.conch(['ps']);
    expect(ps.code, ps.stderr).toBe(0);
    expect(ps.stdout.trim().split('\n')).toHaveLength(29);
    expect(ps.stderr).toBe('');
  });
});

describe('arguments are UTF-8 or refused', () => {
  it('a non-UTF-8 byte in an argument is refused with a clear error, not replaced', async () => {
    const target = join(home.dir, 'a\uFFFDb');
    writeFileSync(target, 'the file a command with U+FFFD would touch');
    // bash's $'…' puts the raw byte 0xff in the argument.
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(
        'bash',
        ['-c', `exec "${process.execPath}" "${BIN}" exec -- $'rm -f ${home.dir}/a\\xffb'`],
        { env: home.env, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not valid UTF-8');
    expect(run.stderr).toContain('\\xff');
    expect(existsSync(target)).toBe(true);
  });
});
