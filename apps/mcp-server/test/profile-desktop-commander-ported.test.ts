/**
 * Desktop Commander's own process tests (its repository's `test/` folder), rewritten to run over MCP
 * against the REAL built server under `--profile desktop-commander`, the way an agent written for Desktop
 * Commander calls it: the PID is taken from the result text, reads use offset 0 / > 0 / < 0.
 *
 * Each `describe` names the original file. The originals slept fixed times; these wait for conditions.
 * Where conch deliberately differs from the original (docs/profiles.md lists each difference and why),
 * the test checks conch's documented behaviour and says so.
 */

import { waitFor } from '@conch/core/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type DcResult as Dc, type ServerHandle, startServer, workAndSeenPids } from './harness.js';

/** Every process a test started: all must be gone once the servers closed. */
const { work, seenPids } = workAndSeenPids('conch-dc-ported-');

/** The profile under test, with extra flags. */
function server(...args: string[]): Promise<ServerHandle> {
  return startServer({ args: ['--profile', 'desktop-commander', '--cwd', work, ...args] });
}

/** `start_process`, and the PID as the original's tests read it: from the text. */
async function start(
  h: ServerHandle,
  command: string,
  timeout_ms: number,
  extra: Record<string, unknown> = {},
): Promise<Dc> {
  const r = await h.ok<Dc>('start_process', { command, timeout_ms, ...extra });
  const pid = Number(/Process started with PID (\d+)/.exec(r.text)?.[1]);
  expect(pid).toBeGreaterThan(0);
  expect(r.pid).toBe(pid);
  seenPids.add(pid);
  return r;
}

const read = (h: ServerHandle, pid: number, args: Record<string, unknown> = {}) =>
  h.ok<Dc>('read_process_output', { pid, ...args });

/** The body of a read_process_output text (between the header and the state line). */
function bodyOf(text: string): string {
  const afterHeader = text.slice(text.indexOf('\n\n') + 2);
  return afterHeader.replace(/\n\n(✅|🔄) [^\n]*$/, '');
}

/** Waits until the process has ended, reading a tail (which moves no cursor). */
function completed(h: ServerHandle, pid: number): Promise<Dc> {
  return waitFor(
    async () => {
      const tail = await read(h, pid, { offset: -1 });
      return tail.status === 'finished' ? tail : undefined;
    },
    { what: `process ${pid} to end` },
  );
}

/**
 * Reads new output (offset 0) until `done` holds for everything read so far, or the process ended.
 * Returns each read's text.
 */
async function readNewUntil(h: ServerHandle, pid: number, done: (all: string) => boolean): Promise<string[]> {
  const texts: string[] = [];
  await waitFor(
    async () => {
      const r = await read(h, pid, { timeout_ms: 2000 });
      texts.push(r.text);
      return done(texts.join('\n')) || r.status === 'finished';
    },
    { what: `output of ${pid}` },
  );
  return texts;
}

/** The first output line of a start_process text, as the original's default-shell test finds it. */
function firstOutputLine(text: string): string | undefined {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .find((line) => !line.includes('PID') && !line.includes('Initial output:'))
    ?.trim();
}

// -------------------------------------------------------------------------------------------------
describe('test-process-pagination.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server();
  });
  afterAll(async () => h?.close());

  test('offset 0 reads only new output of a running process: every line once, none lost', async () => {
    const r = await start(
      h,
      `node -e "let i=0; setInterval(() => { console.log('tick' + i++); if(i>5) process.exit(0); }, 200)"`,
      500,
    );
    const texts = await readNewUntil(h, r.pid, () => false);
    expect(texts[texts.length - 1]).toContain('Process completed with exit code 0');
    // start_process showed the first ticks but did not move the cursor: the reads show each tick once.
    const ticks = texts.join('\n').match(/tick\d/g) ?? [];
    expect(ticks).toEqual(['tick0', 'tick1', 'tick2', 'tick3', 'tick4', 'tick5']);
    for (const text of texts)
      expect(text).toMatch(/^\[Reading \d+ new lines (from line \d+ )?\(total: \d+ lines/);
  });

  test('a positive offset reads from that absolute line', async () => {
    const r = await start(h, `node -e "for(let i=0; i<10; i++) console.log('line' + i)"`, 3000);
    await completed(h, r.pid);
    const page = await read(h, r.pid, { offset: 5, length: 3, timeout_ms: 1000 });
    expect(bodyOf(page.text)).toBe('line5\nline6\nline7');
    expect(page.text).not.toContain('line4');
    expect(page.text).toContain('from line 5');
  });

  test('a negative offset reads the tail (conch: the last N lines, no empty line after the final newline)', async () => {
    const r = await start(h, `node -e "for(let i=0; i<20; i++) console.log('line' + i)"`, 3000);
    await completed(h, r.pid);
    const tail = await read(h, r.pid, { offset: -5, timeout_ms: 1000 });
    expect(tail.text).toContain('Reading last');
    // Desktop Commander counts an empty 21st line and shows line16-line19 and it; conch shows five lines.
    expect(tail.text.startsWith('[Reading last 5 lines (total: 20 lines)]\n\n')).toBe(true);
    expect(bodyOf(tail.text)).toBe('line15\nline16\nline17\nline18\nline19');
  });

  test('length limits a page and the header says how many lines remain', async () => {
    const r = await start(h, `node -e "for(let i=0; i<100; i++) console.log('line' + i)"`, 3000);
    await completed(h, r.pid);
    const page = await read(h, r.pid, { offset: 1, length: 10, timeout_ms: 1000 });
    expect(page.text).toContain('remaining');
    expect(page.text).toContain('Reading 10 lines');
    expect(page.text.split('\n')[0]).toBe('[Reading 10 lines from line 1 (total: 100 lines, 89 remaining)]');
  });

  test('a completed process is reported with its runtime', async () => {
    const r = await start(h, `node -e "setTimeout(() => console.log('done'), 500)"`, 200);
    expect(r.status).toBe('running');
    const texts = await readNewUntil(h, r.pid, (all) => all.includes('Process completed'));
    const all = texts.join('\n');
    expect(all).toContain('done');
    expect(all).toMatch(/Process completed with exit code 0 \(runtime: \d+\.\d\ds\)/);
  });

  test('interact_with_process bounds a long answer; the whole of it stays readable by offset', async () => {
    const repl = await start(h, 'python3 -i', 3000);
    expect(repl.status).toBe('waiting_for_input');
    const result = await h.ok<Dc>(
      'interact_with_process',
      // (The original's `for i in range(1500): print(…)` needs a second Enter to end the block.)
      { pid: repl.pid, input: 'print("\\n".join(f"line {i}" for i in range(1500)))', timeout_ms: 10000 },
      { timeoutMs: 60_000 },
    );
    // The answer is cut to the per-call budget, says what it left out, and keeps the end.
    expect(result.text).toMatch(/lines omitted/);
    expect(result.text).toContain('line 1499');
    expect(result.text.split('\n').length).toBeLessThan(1100);
    const whole = await read(h, repl.pid, { offset: 1, length: 100_000 });
    for (const n of [0, 750, 1499]) expect(whole.text).toContain(`\nline ${n}\n`);
    await h.ok('force_terminate', { pid: repl.pid });
  });

  test('an absolute offset re-reads output an offset-0 read already returned', async () => {
    const r = await start(h, `node -e "for(let i=0; i<5; i++) console.log('data' + i)"`, 3000);
    await completed(h, r.pid);
    const first = await read(h, r.pid, { offset: 0, timeout_ms: 1000 });
    expect(first.text).toContain('data0');
    const again = await read(h, r.pid, { offset: 1, length: 3, timeout_ms: 1000 });
    expect(bodyOf(again.text)).toBe('data1\ndata2\ndata3');
  });
});

// -------------------------------------------------------------------------------------------------
describe('test-read-completed-process.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server();
  });
  afterAll(async () => h?.close());

  test('output printed after start_process returned is read once the process has completed', async () => {
    const r = await start(h, `node -e "setTimeout(() => console.log('SUCCESS MESSAGE'), 1000)"`, 500);
    expect(r.status).toBe('running');
    await completed(h, r.pid);
    const after = await read(h, r.pid, { timeout_ms: 1000 });
    expect(after.text).toContain('SUCCESS MESSAGE');
    expect(after.text).toContain('Process completed with exit code 0');
  });

  test('the output of a process that ended within start_process is read again by read_process_output', async () => {
    const r = await start(h, `node -e "console.log('IMMEDIATE OUTPUT')"`, 2000);
    expect(r.status).toBe('finished');
    expect(r.text).toContain('IMMEDIATE OUTPUT');
    const after = await read(h, r.pid, { timeout_ms: 1000 });
    expect(after.text).toContain('IMMEDIATE OUTPUT');
    expect(after.text.split('\n')[0]).toBe('[Reading 1 new lines (total: 1 lines)]');
  });
});

// -------------------------------------------------------------------------------------------------
describe('REPLs: test-enhanced-repl.js, test-repl-interaction.js, test-node-repl.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server();
  });
  afterAll(async () => h?.close());

  test('python: read the prompt, interact with and without waiting, a multi-line block', async () => {
    const r = await start(h, 'python3 -i', 10000, { shell: '/bin/bash' });
    const initial = await read(h, r.pid, { timeout_ms: 2000 });
    expect(initial.text).toContain('>>>');
    const withWait = await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: 'print("Hello from Python with wait!")',
      wait_for_prompt: true,
      timeout_ms: 5000,
    });
    expect(withWait.text).toContain('Hello from Python with wait!');
    await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: 'print("Hello from Python without wait!")',
      wait_for_prompt: false,
    });
    const texts = await readNewUntil(h, r.pid, (all) => all.includes('Hello from Python without wait!\n'));
    // The cursor moved only at the first read: the answer given by the waiting interaction comes again.
    expect(texts.join('\n')).toContain('Hello from Python with wait!\n');
    const block = `def greet(name):
    return f"Hello, {name}!"

for i in range(3):
    print(greet(f"Guest {i+1}"))`;
    await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: block,
      wait_for_prompt: true,
      timeout_ms: 5000,
    });
    const ran = await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: '',
      wait_for_prompt: true,
      timeout_ms: 5000,
    });
    for (const n of [1, 2, 3]) expect(ran.text).toContain(`Hello, Guest ${n}!`);
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('python and node: input sent without waiting, the answer found by read_process_output', async () => {
    for (const [repl, print, factor] of [
      ['python3 -i', (args: string) => `print(${args})`, 2],
      ['node -i', (args: string) => `console.log(${args})`, 3],
    ] as const) {
      const r = await start(h, repl, 5000);
      const value = 7 + factor;
      await h.ok('interact_with_process', {
        pid: r.pid,
        input: print('"STARTING TEST"'),
        wait_for_prompt: false,
      });
      await h.ok('interact_with_process', {
        pid: r.pid,
        input: print(`"REPL_TEST_VALUE:", ${value} * ${factor}`),
        wait_for_prompt: false,
      });
      const texts = await readNewUntil(h, r.pid, (all) => all.includes(`REPL_TEST_VALUE: ${value * factor}`));
      expect(texts.join('\n'), repl).toContain(`REPL_TEST_VALUE: ${value * factor}`);
      expect(texts.join('\n'), repl).toContain('STARTING TEST');
      const killed = await h.call('force_terminate', { pid: r.pid });
      expect(killed.text).toBe(`Successfully initiated termination of session ${r.pid}`);
    }
  });

  test('node: a function and a loop typed over several lines run in the REPL', async () => {
    const r = await start(h, 'node -i', 5000);
    const hello = await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: 'console.log("Hello from Node.js!");',
    });
    expect(hello.text).toContain('Hello from Node.js!');
    const code = `
function greet(name) {
  return \`Hello, \${name}!\`;
}

for (let i = 0; i < 3; i++) {
  console.log(greet(\`User \${i}\`));
}
`;
    await h.ok('interact_with_process', { pid: r.pid, input: code, timeout_ms: 5000 });
    const texts = await readNewUntil(h, r.pid, (all) => all.includes('Hello, User 2!'));
    const all = texts.join('\n');
    for (const n of [0, 1, 2]) expect(all).toContain(`Hello, User ${n}!`);
    expect(all).toContain('Hello from Node.js!');
    await h.ok('force_terminate', { pid: r.pid });
  });
});

// -------------------------------------------------------------------------------------------------
describe('repro/test-interact-join-stall.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server();
  });
  afterAll(async () => h?.close());

  test('with a large log, an answer trickling in is whole and other calls are answered meanwhile', async () => {
    const r = await start(h, 'python3 -i -q', 4000);
    await h.ok('interact_with_process', { pid: r.pid, input: 'import time', timeout_ms: 3000 });
    // The original grows the buffer to ~45 MB; 6 MB in 5000 lines makes the same point here.
    await h.ok(
      'interact_with_process',
      { pid: r.pid, input: `print('\\n'.join('X'*1200 for _ in range(5000)))`, timeout_ms: 15000 },
      { timeoutMs: 60_000 },
    );
    const trickle = h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: "[ (time.sleep(0.08) or print('tick', i)) for i in range(40) ]",
      timeout_ms: 12000,
    });
    let trickleDone = false;
    void trickle.then(() => {
      trickleDone = true;
    });
    // The 40 ticks take over 3 s; a server busy re-reading its log would not answer before they end.
    const list = await h.call('list_sessions', {});
    expect(list.text).toContain(`PID: ${r.pid}, Blocked: true`);
    expect(trickleDone).toBe(false);
    const answer = await trickle;
    for (const i of [0, 20, 39]) expect(answer.text).toContain(`tick ${i}\n`);
    expect(answer.status).toBe('waiting_for_input');
    await h.ok('force_terminate', { pid: r.pid });
  });
});

// -------------------------------------------------------------------------------------------------
describe('repro/test-start-process-timeout-block.js and repro/test-process-wait-client-cap.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server();
  });
  afterAll(async () => h?.close());

  const TIMEOUT_MS = 800;

  async function heldForTheTimeout(command: string): Promise<Dc> {
    const t0 = Date.now();
    const r = await start(h, command, TIMEOUT_MS);
    // A lower bound only: the call waited out the timeout rather than returning early.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT_MS - 75);
    expect(r.status).toBe('running');
    expect(r.text).toContain('Process is running. Use read_process_output to get more output.');
    const list = await h.call('list_sessions', {});
    expect(list.text).toMatch(new RegExp(`^PID: ${r.pid}, Blocked: true, Runtime: \\d+s$`, 'm'));
    return r;
  }

  test('a silent process is held for the full timeout and listed as Blocked: true', async () => {
    const r = await heldForTheTimeout(`node -e "setTimeout(function(){}, 60000)"`);
    expect(firstOutputLine(r.text)).toMatch(/^⏳/);
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('a chatty process with no prompt is held for the full timeout and listed as Blocked: true', async () => {
    const r = await heldForTheTimeout(
      `node -e "setInterval(function(){console.log('progress')},100);setTimeout(function(){},60000)"`,
    );
    expect(r.text).toContain('progress');
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('a process reading its terminal returns at once, waiting for input (conch: kernel evidence)', async () => {
    const r = await start(
      h,
      `node -e "process.stdout.write('>>> '); process.stdin.once('data', () => process.exit(0))"`,
      60_000,
    );
    expect(r.status).toBe('waiting_for_input');
    expect(r.text).toContain(`Process ${r.pid} is waiting for input`);
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('a process that printed a REPL prompt and went quiet returns early, waiting for input', async () => {
    // Without the early return the call would last the whole timeout_ms (and the test its timeout).
    const r = await start(
      h,
      `node -e "process.stdout.write('>>> ');setTimeout(function(){}, 60000)"`,
      60_000,
    );
    expect(r.status).toBe('waiting_for_input');
    const list = await h.call('list_sessions', {});
    expect(list.text).toMatch(new RegExp(`^PID: ${r.pid}, Blocked: true, `, 'm'));
    await h.ok('force_terminate', { pid: r.pid });
  });

  test('interact_with_process returns at its timeout while the input is still being worked on', async () => {
    const r = await start(h, 'node -i', 5000);
    const busy = await h.ok<Dc>('interact_with_process', {
      pid: r.pid,
      input: 'var __end=Date.now()+60000; while(Date.now()<__end){}',
      timeout_ms: 1000,
    });
    expect(busy.text).toContain('Response may be incomplete (timeout reached)');
    expect(busy.status).toBe('running');
    await h.ok('force_terminate', { pid: r.pid });
  });

  test("a timeout_ms beyond the client's own request timeout: progress notifications keep the call alive", async () => {
    let progress = 0;
    const r = await h.ok<Dc>(
      'start_process',
      { command: `node -e "setTimeout(function(){}, 60000)"`, timeout_ms: 4500 },
      { timeoutMs: 2500, onProgress: () => progress++ },
    );
    seenPids.add(r.pid);
    expect(r.status).toBe('running');
    expect(progress).toBeGreaterThan(0);
    await h.ok('force_terminate', { pid: r.pid });
  });
});

// -------------------------------------------------------------------------------------------------
describe('test-default-shell.js', () => {
  const servers: ServerHandle[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  test('the default shell /bin/sh: echo $0 prints /bin/sh', async () => {
    const h = await server('--shell', '/bin/sh');
    servers.push(h);
    const r = await start(h, 'echo $0', 2000);
    expect(firstOutputLine(r.text)).toBe('/bin/sh');
    expect(r.text).toContain('(shell: /bin/sh)');
  });

  test('the default shell /bin/bash: echo $0 prints /bin/bash', async () => {
    const h = await server('--shell', '/bin/bash');
    servers.push(h);
    const r = await start(h, 'echo $0', 2000);
    expect(['/bin/bash', 'bash']).toContain(firstOutputLine(r.text));
  });

  test('switching shells: /bin/sh, /bin/bash, /bin/sh again', async () => {
    const h = await server();
    servers.push(h);
    for (const shell of ['/bin/sh', '/bin/bash', '/bin/sh']) {
      const r = await start(h, 'echo $0', 2000, { shell });
      expect(firstOutputLine(r.text), shell).toBe(shell);
    }
  });
});

// -------------------------------------------------------------------------------------------------
describe('integration/terminal-output-buffer-leak.js', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    // A server that kept the flood in memory would die of it: its JavaScript heap is capped far below it.
    h = await startServer({
      args: ['--profile', 'desktop-commander', '--cwd', work],
      nodeArgs: ['--max-old-space-size=128'],
    });
  });
  afterAll(async () => h?.close());

  test('a flood streaming after start_process returned: memory bounded, the server answers, eviction said, the tail readable', async () => {
    // 280 MiB on one line (the original sends 600 MB), past the 256 MiB log file: lines get evicted.
    const chunks = 280;
    const r = await start(
      h,
      `node -e "const s='x'.repeat(1048576); for(let i=0;i<${chunks};i++) process.stdout.write(s); process.stdout.write('\\nFLOOD_END_MARKER\\n');"`,
      500,
    );
    expect(r.status).toBe('running');
    // The server keeps answering while the flood streams in.
    const list = await h.call('list_sessions', {});
    expect(list.text).toContain(`PID: ${r.pid}, Blocked: true`);
    const tail = await waitFor(
      async () => {
        const t = await read(h, r.pid, { offset: -1 });
        return t.status === 'finished' ? t : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the flood to end' },
    );
    expect(tail.exit_code).toBe(0);
    expect(bodyOf(tail.text)).toBe('FLOOD_END_MARKER');
    // Lines are split at 1 MiB: the flood makes at least 280 of them, then the marker.
    const total = Number(/^\[Reading last 1 lines \(total: (\d+) lines\)\]/.exec(tail.text)?.[1]);
    expect(total).toBeGreaterThan(chunks);
    // What is gone is said, with the original's word; line numbers still count it.
    expect(tail.text).toMatch(
      /\[WARNING: output exceeded the buffer cap; \d+ lines were evicted and cannot be read/,
    );
    // A first offset-0 read starts at line 0 (kept in the log file), bounded, with what remains.
    const fresh = await read(h, r.pid, { timeout_ms: 1000 });
    expect(fresh.text.split('\n')[0]).toBe(
      `[Reading 1 new lines from line 0 (total: ${total} lines, ${total - 1} remaining)]`,
    );
    expect(bodyOf(fresh.text)).toMatch(/^x{1000}/);
  });
});

// -------------------------------------------------------------------------------------------------
describe('test-blocked-commands.js and test-blocklist-bypass.js (conch: --deny)', () => {
  let h: ServerHandle;
  beforeAll(async () => {
    h = await server(...['rm', 'mkfs', 'dd', 'sudo', 'iptables', 'cat'].flatMap((d) => ['--deny', d]));
  });
  afterAll(async () => h?.close());

  test('commands the deny list does not name run', async () => {
    for (const command of ['echo "Hello World"', 'pwd', 'date', 'ls -la /home']) {
      const r = await h.call<Dc>('start_process', { command, timeout_ms: 2000 });
      expect(r.isError, command).toBe(false);
      seenPids.add(r.structured.pid);
      expect(r.text, command).toContain('Process completed with exit code 0');
    }
  });

  test('denied commands are refused before anything runs, however they are spelled', async () => {
    for (const command of [
      'rm',
      'mkfs',
      'dd',
      '/usr/bin/sudo ls',
      'echo "$(iptables -L)"',
      'echo `rm -f /nonexistent/conch-test`',
      'echo $(cat $(which sudo))',
      'HOME=/tmp /usr/sbin/iptables',
      'echo "`/usr/bin/sudo`"',
    ]) {
      const r = await h.call('start_process', { command, timeout_ms: 2000 });
      expect(r.isError, command).toBe(true);
      expect(r.error?.code, command).toBe('POLICY_DENIED');
    }
  });
});
