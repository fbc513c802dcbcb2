import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type CommandResult, type ServerHandle, startServer } from './harness.js';
import { TARGETS } from './targets.js';

describe.each(TARGETS)('hostile input never stalls or confuses the server (%s)', (target) => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await startServer({ target });
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a backtracking filter pattern is matched in linear time (RE2), other calls go on', async () => {
    // 40 "a"s and a "b": JavaScript's backtracking engine needs 2^40 steps for ^(a+)+$ here.
    const r = await h.exec(`printf '%s\\n' ${'a'.repeat(40)}b ${'a'.repeat(40)} done`);
    expect(r.status).toBe('completed');
    const page = await h.ok<CommandResult>('read_output', {
      command_id: r.command_id,
      filter: '^(a+)+$',
    });
    expect(page.output).toContain(`\n1: ${'a'.repeat(40)}`);
    expect(page.output).not.toContain('b');
    const other = await h.exec('echo still serving');
    expect(other.output).toBe('still serving');
  });

  test('a backtracking until pattern neither stalls the server nor misreports the command', async () => {
    const r = await h.exec(`printf '%s\\n' ${'a'.repeat(40)}b; sleep 0.2; echo end`, {
      until: '^(a+)+$',
      pause_timeout: 5,
    });
    expect(r.status).toBe('completed');
    expect(r.exit_code).toBe(0);
    expect(r.output).toContain('end');
  });

  test('until and filter reject non-RE2 syntax with INVALID_ARGUMENT naming the pattern', async () => {
    const r = await h.exec('echo x');
    for (const [tool, args] of [
      ['read_output', { command_id: r.command_id, filter: '(a)\\1' }],
      ['execute', { command: 'true', until: '(?<=x)y' }],
    ] as const) {
      const bad = await h.call(tool, args);
      expect(bad.error?.code, tool).toBe('INVALID_ARGUMENT');
      expect(bad.error?.message).toContain(JSON.stringify(Object.values(args).at(-1)));
      expect(bad.error?.hint).toContain('RE2');
    }
    const described = h.tools.find((t) => t.name === 'execute')?.inputSchema.properties?.until as {
      description?: string;
    };
    expect(described.description).toContain('RE2');
  });

  test('a NUL byte in a command is INVALID_ARGUMENT, not a shell syntax error', async () => {
    const bad = await h.call('execute', { command: 'echo a\u0000b' });
    expect(bad.error?.code).toBe('INVALID_ARGUMENT');
    expect(bad.error?.message).toContain('NUL');
    expect((await h.exec('echo fine')).output).toBe('fine');
  });

  test('a NUL byte in a cwd is INVALID_ARGUMENT wherever a cwd is taken; nothing runs', async () => {
    const base = mkdtempSync(join(tmpdir(), 'conch-nul-'));
    try {
      const marker = join(base, 'ran');
      for (const [tool, args] of [
        ['execute', { command: `touch ${marker}`, cwd: `${base}\u0000/elsewhere` }],
        ['execute', { command: `touch ${marker}`, cwd: `${base}\u0000/elsewhere`, background: true }],
        ['create_local', { cwd: `${base}\u0000/elsewhere` }],
      ] as const) {
        const bad = await h.call(tool, args);
        expect(bad.error?.code, `${tool} ${JSON.stringify(args)}`).toBe('INVALID_ARGUMENT');
        expect(bad.error?.message).toContain('NUL');
        expect(bad.error?.message).toContain('cwd');
      }
      expect(existsSync(marker)).toBe(false);
      expect((await h.exec('echo fine')).output).toBe('fine');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  // Its pieces cannot occur by chance in the ids and paths of a result: uppercase and a 9 are not in the ids'
  // alphabet (lowercase base32), and a 4-character piece of a temp directory's name is one chance in 10^7.
  // ('pw4', as before, was in a command id once: `c_rq6bonpw4u`.)
  const SECRET = 'Pw9XYZsecret9';
  const PIECES = [SECRET.slice(0, 4), SECRET.slice(6)];
  const programs: Array<[string, string]> = [
    ['grep --color highlighting a part', 'echo "$pw" | grep --color=always XYZ'],
    ['bold inside', `printf '%s\\e[1m%s\\e[0m\\n' "\${pw:0:4}" "\${pw:4}"`],
    ['an overstruck character', `printf '%sQ\\b%s\\n' "\${pw:0:4}" "\${pw:4}"`],
  ];
  for (const [what, program] of programs) {
    test(`a secret answer stays masked with ${what}: result, screen, raw, pages and spill file`, async () => {
      const r = await h.exec(`read -rs pw; ${program}; echo done`, { pause_timeout: 5 });
      expect(r.status).toBe('partial');
      const answered = await h.ok<CommandResult>('respond', {
        command_id: r.command_id,
        text: SECRET,
        secret: true,
      });
      expect(answered.status).toBe('completed');
      const views = [
        answered.output,
        JSON.stringify(await h.ok('read_output', { command_id: r.command_id, offset: 0 })),
        JSON.stringify(await h.ok('read_output', { command_id: r.command_id, offset: 0, view: 'raw' })),
        JSON.stringify(await h.ok('read_output', { command_id: r.command_id, view: 'screen' })),
        JSON.stringify(await h.ok('read_output', { command_id: r.command_id, offset: 0, filter: 'secret' })),
      ];
      const logPath = answered.output_info?.log_path;
      if (logPath && existsSync(logPath)) views.push(readFileSync(logPath, 'utf8'));
      for (const view of views) for (const piece of PIECES) expect(view).not.toContain(piece);
      expect(answered.output).toContain('[secret]');
      expect(answered.output).toContain('done');
    });
  }
});

describe("a NUL byte in the profiles' directory parameters", () => {
  const root = mkdtempSync(join(tmpdir(), 'conch-nul-profiles-'));
  mkdirSync(join(root, 'sub'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  for (const [profile, tool, args] of [
    [
      'astonish',
      'shell_command',
      { command: 'touch ran', working_dir: `${root}/sub\u0000x`, background: true },
    ],
    ['astonish', 'shell_command', { command: 'touch ran', working_dir: `${root}/sub\u0000x` }],
    [
      'ollama-code',
      'run_shell_command',
      { command: 'touch ran', directory: 'sub\u0000x', is_background: true },
    ],
  ] as const) {
    test(`${profile} ${tool} ${Object.keys(args).join(',')}: INVALID_ARGUMENT, nothing runs`, async () => {
      const h = await startServer({ args: ['--profile', profile, '--cwd', root] });
      try {
        const bad = await h.call(tool, args);
        expect(bad.isError, bad.text).toBe(true);
        expect(bad.text).toContain('NUL');
        expect(existsSync(join(root, 'sub', 'ran'))).toBe(false);
        expect(existsSync(join(root, 'ran'))).toBe(false);
      } finally {
        await h.close();
      }
    });
  }
});
