/**
 * The driver conformance suite: behaviours every real driver (local PTY, SSH, containers) must show
 * through the engine, run against a real shell with the real clock. Each driver package calls
 * {@link describeDriverConformance} from its own tests. The capabilities the engine's rules need of a
 * driver are listed in {@link REQUIRED_CAPABILITIES}, and each is tested against every driver.
 */

import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { createRealClock } from '../clock.js';
import type {
  Driver,
  DriverKind,
  InputWaitEvidence,
  ScreenFactory,
  SpillStore,
  TerminalProcess,
} from '../driver.js';
import type { CommandPolicy } from '../engine/policy-hook.js';
import { SessionManager } from '../engine/session-manager.js';
import { ConchError } from '../errors.js';
import type { SandboxRules } from '../sandbox/rules.js';
import type { CommandResult } from '../types.js';
import { readToEnd } from './read-to-end.js';
import { waitFor } from './wait-for.js';

/**
 * What the engine's rules need of every driver's terminal processes (optional in the interface, required
 * here): kernel evidence that a program waits on the terminal (prompts, the typed-input policy), the names
 * of the terminal's foreground programs (the typed-input policy), the kill of one foreground job without
 * its shell, the kill of what an ended command left running, and the scan that lists it.
 */
export const REQUIRED_CAPABILITIES = [
  'inputWaitEvidence',
  'foregroundPrograms',
  'killJob',
  'killEscaped',
  'escapedProcesses',
] as const satisfies readonly (keyof TerminalProcess)[];

/** What a driver package provides to the suite. */
export interface ConformanceSetup {
  /** Creates the driver under test (called once). */
  driver: () => Promise<Driver>;
  /** Releases it (called once, after the suite). */
  teardown?: () => Promise<void>;
  spill?: () => SpillStore;
  screen?: ScreenFactory;
  /**
   * Counts live processes on the driver's host whose environment carries CONCH_COMMAND_ID=id (used to
   * prove that kills leave nothing behind).
   */
  countWithCommandId: (commandId: string) => Promise<number>;
  /** Session kind reported by the driver. */
  kind: DriverKind;
  /**
   * A command policy that denies `rm` (e.g. `@conch/policy`'s `policyConfigFromFlags({ deny: ['rm'] })`):
   * the typed-input policy cases run with it (the core cannot build one itself).
   */
  denyRm: () => CommandPolicy;
  /** Run the suite's sessions inside an OS sandbox with these rules (a local driver's sandboxed sessions). */
  sandbox?: SandboxRules;
}

/** Registers the conformance tests (vitest) for one driver. */
export function describeDriverConformance(name: string, setup: ConformanceSetup): void {
  describe(`driver conformance: ${name}`, () => {
    let manager: SessionManager;
    let driver: Driver;
    let sid: string;

    const run = (command: string, extra: Record<string, unknown> = {}): Promise<CommandResult> =>
      manager.execute({ command, session_id: sid, pause_timeout: 10, total_timeout: 30, ...extra });

    beforeAll(async () => {
      driver = await setup.driver();
      manager = new SessionManager({
        clock: createRealClock(),
        localDriver: driver,
        ...(setup.spill ? { spill: setup.spill() } : {}),
        ...(setup.screen ? { screen: setup.screen } : {}),
        // A program that stops reading its input must time out a write soon.
        defaults: { writeDeadlineMs: 1500 },
      });
      const session = await manager.openSession(driver, {
        kind: setup.kind,
        shell: '/bin/bash',
        ...(setup.sandbox ? { sandbox: setup.sandbox } : {}),
      });
      sid = session.id;
    }, 60_000);

    afterAll(async () => {
      await manager?.shutdown();
      await setup.teardown?.();
    }, 60_000);

    it('runs a command and reports completed with the exact output and exit code', async () => {
      const r = await run('echo hello');
      expect(r.status).toBe('completed');
      expect(r.exit_code).toBe(0);
      expect(r.output).toBe('hello');
      expect(r.reason).toBe('exited');
      expect(r.state).toBe('exited');
    });

    it('reports exact exit codes', async () => {
      expect((await run('false')).exit_code).toBe(1);
      expect((await run('(exit 3)')).exit_code).toBe(3);
      const r = await run('sh -c "exit 42"');
      expect(r.exit_code).toBe(42);
      expect(r.signal).toBeNull();
    });

    it('keeps cwd, exported variables and functions between commands', async () => {
      const cd = await run('cd /tmp');
      expect(cd.cwd).toBe('/tmp');
      expect((await run('pwd')).output).toBe('/tmp');
      await run('export CONCH_TEST_VAR=persisted; f() { echo "fn:$1"; }');
      expect((await run('echo $CONCH_TEST_VAR; f x')).output).toBe('persisted\nfn:x');
    });

    it('runs heredocs and multi-line input', async () => {
      const r = await run("cat <<'EOF'\nline one\n  $HOME stays literal\nEOF\necho after");
      expect(r.output).toBe('line one\n  $HOME stays literal\nafter');
      expect(r.exit_code).toBe(0);
    });

    it('reports a syntax error as completed and non-zero, runs nothing, and the next command works', async () => {
      const r = await run('echo should-not-run\nif then fi (');
      expect(r.status).toBe('completed');
      expect(r.exit_code).not.toBe(0);
      expect(r.output).not.toContain('should-not-run');
      const q = await run('echo "unterminated');
      expect(q.status).toBe('completed');
      expect(q.exit_code).not.toBe(0);
      expect((await run('echo next')).output).toBe('next');
    });

    it('survives set -u and set -o pipefail in the session', async () => {
      const r = await run('set -u -o pipefail; echo on');
      expect(r.output).toBe('on');
      const u = await run('echo "$CONCH_UNSET_VARIABLE_X"');
      expect(u.status).toBe('completed');
      expect(u.exit_code).not.toBe(0);
      expect((await run('set +u +o pipefail; echo off')).output).toBe('off');
    });

    it('sends long commands and control characters through a script, not the line editor', async () => {
      const long = 'x'.repeat(10_000);
      const r = await run(`echo ${long} | wc -c`);
      expect(r.output.trim()).toBe('10001');
      const tab = await run("printf '%s\\n' 'a\tb' | od -c | head -1");
      expect(tab.output).toContain('\\t');
    });

    it('runs the next command after a program left the terminal raw', async () => {
      expect((await run('stty raw -echo')).status).toBe('completed');
      const next = await run('echo still-typed; stty sane');
      expect(next.status).toBe('completed');
      expect(next.output).toBe('still-typed');
      expect((await run('echo ok')).output).toBe('ok');
    });

    it('round-trips UTF-8', async () => {
      expect((await run('echo "héllo 日本 🐚"')).output).toBe('héllo 日本 🐚');
    });

    it('returns partial on silence, respecting pause_timeout over a smaller total_timeout', async () => {
      const r = await run('sleep 30', { pause_timeout: 0.5, total_timeout: 0.1 });
      expect(r.status).toBe('partial');
      expect(r.reason).toBe('silence');
      // The pause that ended the call is the one given, not the smaller total_timeout.
      expect(r.pause_timeout).toBe(0.5);
      const k = await manager.sendControl({ command_id: r.command_id, key: 'ctrl+c', pause_timeout: 5 });
      expect(k.status).toBe('completed');
      expect(k.exit_code).toBe(130);
      expect(k.signal).toBe('SIGINT');
    });

    it('returns by total_timeout while output streams', async () => {
      const r = await run('for i in $(seq 1 60); do echo tick $i; sleep 0.05; done', {
        pause_timeout: 5,
        total_timeout: 1,
      });
      expect(r.status).toBe('partial');
      expect(r.reason).toBe('total_timeout');
      const rest = await manager.readOutput({
        command_id: r.command_id,
        pause_timeout: 10,
        total_timeout: 60,
      });
      expect(rest.status).toBe('completed');
      expect(`${r.output}\n${rest.output}`).toContain('tick 60');
    });

    it('stops at an until match', async () => {
      const r = await run('echo starting; sleep 0.2; echo READY now; sleep 20', { until: 'READY' });
      expect(r.reason).toBe('until_matched');
      expect(r.output).toContain('READY');
      await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
    });

    it('detects a password prompt, takes a secret answer, and never shows it', async () => {
      const r = await run('read -s -p \'Password: \' pw; echo; echo "got ${#pw} chars"');
      expect(r.status).toBe('partial');
      expect(r.reason).toBe('awaiting_input');
      expect(r.prompt?.kind).toBe('password');
      const secret = 'hunter2-conformance';
      const done = await manager.respond({ command_id: r.command_id, text: secret, secret: true });
      expect(done.status).toBe('completed');
      expect(done.output).toContain(`got ${secret.length} chars`);
      const all = await manager.readOutput({ command_id: r.command_id, offset: 0 });
      expect(JSON.stringify([r, done, all])).not.toContain(secret);
    });

    it('runs a command isolated when the shell is busy', async () => {
      const busy = await run('sleep 20', { pause_timeout: 0.3 });
      expect(busy.status).toBe('partial');
      const iso = await run('echo isolated; pwd', { cwd: '/' });
      expect(iso.status).toBe('completed');
      expect(iso.isolated).toBe(true);
      expect(iso.output).toBe('isolated\n/');
      await manager.sendControl({ command_id: busy.command_id, key: 'C-c' });
    });

    it('gives foreground, isolated and background commands the $0 of the session shell, and no arguments', async () => {
      const probe = 'echo "[$0|$#]"';
      for (const shell of ['/bin/bash', 'bash', 'sh', 'zsh']) {
        // zsh is the one shell a host may lack: skipped then; bash and sh must start.
        const session = await manager
          .openSession(driver, { kind: setup.kind, shell })
          .catch((error: unknown) => {
            if (shell === 'zsh' && ConchError.is(error) && error.code === 'INVALID_ARGUMENT')
              return undefined;
            throw error;
          });
        if (!session) continue;
        const exec = (command: string, extra: Record<string, unknown> = {}) =>
          manager.execute({
            command,
            session_id: session.id,
            pause_timeout: 10,
            total_timeout: 30,
            ...extra,
          });
        try {
          // What the shell itself was started as: its argv[0], which is its own `$0`.
          const argv0 = (await exec('tr "\\0" "\\n" < /proc/$$/cmdline | head -n 1')).output;
          expect(argv0, shell).toBe(shell);
          const want = `[${shell}|0]`;
          expect((await exec(probe)).output, `${shell} foreground`).toBe(want);
          // Long enough to be run from a private script instead of typed.
          expect((await exec(`: ${'x'.repeat(4000)}; ${probe}`)).output, `${shell} script`).toBe(want);
          const busy = await exec('sleep 20', { pause_timeout: 0.3 });
          expect(busy.status).toBe('partial');
          const isolated = await exec(probe);
          expect(isolated.isolated).toBe(true);
          expect(isolated.output, `${shell} isolated`).toBe(want);
          await manager.sendControl({ command_id: busy.command_id, key: 'C-c' });
          // Every call's output counts: the first may carry it before the command's end is seen.
          const background = await readToEnd(manager, await exec(probe, { background: true }));
          expect(background.output, `${shell} background`).toBe(want);
        } finally {
          await manager.closeSession(session.id);
        }
      }
    });

    it('gives an isolated command the environment as of the last command, unset variables gone', async () => {
      await run(`export CONCH_ISO_A=1 CONCH_ISO_BIG=${'x'.repeat(3000)} CONCH_ISO_Z=old`);
      await run('unset CONCH_ISO_BIG; export CONCH_ISO_B=2 CONCH_ISO_Z=new');
      const busy = await run('sleep 20', { pause_timeout: 0.3 });
      expect(busy.status).toBe('partial');
      const iso = await run('echo "${CONCH_ISO_A}-${CONCH_ISO_B}-${#CONCH_ISO_BIG}-${CONCH_ISO_Z}"');
      expect(iso.isolated).toBe(true);
      expect(iso.output).toBe('1-2-0-new');
      await manager.sendControl({ command_id: busy.command_id, key: 'C-c' });
      await run('unset CONCH_ISO_A CONCH_ISO_B CONCH_ISO_Z');
    });

    it("gives an isolated command started right after a command ends that command's exports and unsets", async () => {
      const finished = (r: CommandResult) => readToEnd(manager, r);
      for (let round = 0; round < 5; round++) {
        // Started the moment the export's result arrives: the shell may still be snapshotting.
        await run(`export CONCH_SNAP_A=a${round} CONCH_SNAP_B=b${round}`);
        const bg = await finished(
          await run('echo "${CONCH_SNAP_A}-${CONCH_SNAP_B-unset}"', { background: true }),
        );
        expect(bg.output).toBe(`a${round}-b${round}`);
        await run('unset CONCH_SNAP_B');
        const busy = await run('sleep 20', { pause_timeout: 0.3 });
        const iso = await finished(await run('echo "${CONCH_SNAP_A}-${CONCH_SNAP_B-unset}"'));
        expect(iso.isolated).toBe(true);
        expect(iso.output).toBe(`a${round}-unset`);
        await manager.sendControl({ command_id: busy.command_id, key: 'C-c' });
        await finished(busy);
      }
      // A command line cut short by Ctrl+C reports its end from the prompt hook, snapshot included.
      const cut = await run('export CONCH_SNAP_A=cut; sleep 20; echo never', { pause_timeout: 0.3 });
      expect(cut.status).toBe('partial');
      await manager.sendControl({ command_id: cut.command_id, key: 'C-c' });
      expect((await finished(cut)).output).not.toContain('never');
      const after = await finished(await run('echo "$CONCH_SNAP_A"', { background: true }));
      expect(after.output).toBe('cut');
      await run('unset CONCH_SNAP_A CONCH_SNAP_B');
    });

    it('shares the terminal with a person: while their program or unfinished line holds it, commands run isolated', async () => {
      let seen = '';
      const person = manager.attachTerminal(sid, {
        onOutput: (bytes) => {
          seen += new TextDecoder().decode(bytes);
        },
      });
      const holds = () => manager.listSessions().find((s) => s.session_id === sid)?.attached?.holds_terminal;
      const proc = manager.getSession(sid).proc!;
      const file = `conch-share-${process.pid}.txt`;
      try {
        // The person's `cat > FILE` holds the terminal: the agent's command runs beside it, not into it.
        await person.write(`cat > ${file}\r`);
        await waitFor(async () => (await proc.foregroundIsOwn?.()) === false);
        await person.write('from the person\r');
        const beside = await run('echo agent-$((40+2))');
        expect(beside).toMatchObject({
          status: 'completed',
          exit_code: 0,
          output: 'agent-42',
          isolated: true,
          held_by_person: true,
        });
        await person.write('\u0004');
        await waitFor(() => holds() === false);
        const back = await run(`cat ${file}; rm -f ${file}`);
        expect(back).toMatchObject({ status: 'completed', output: 'from the person' });
        expect(back.isolated).toBeUndefined();

        // A half-typed line: the agent's command runs isolated; the line runs unchanged on Enter.
        await person.write('echo half-');
        await waitFor(() => seen.includes('echo half-'));
        const aside = await run('echo agent-2');
        expect(aside).toMatchObject({ output: 'agent-2', isolated: true, held_by_person: true });
        await person.write('typed\r');
        // Its output (the echo of the typed line and the prompt may come in either order).
        await waitFor(() => /(?<!echo )half-typed\r?\n/.test(seen));
        await waitFor(() => holds() === false);
        const again = await run('echo in-shell');
        expect(again).toMatchObject({ status: 'completed', output: 'in-shell' });
        expect(again.isolated).toBeUndefined();
        expect(seen).not.toContain('__conch');
        const listed = manager.listCommands({ session_id: sid }).processes;
        expect(listed.filter((p) => p.state === 'awaiting_input')).toEqual([]);
      } finally {
        person.detach();
      }
    });

    it('never shows the marker that says the environment snapshot is written', async () => {
      let seen = '';
      const attachment = manager.attachTerminal(sid, {
        onOutput: (bytes) => {
          seen += new TextDecoder().decode(bytes);
        },
      });
      try {
        const results: CommandResult[] = [];
        for (const command of ['export CONCH_SNAP_M=1', 'echo visible', 'unset CONCH_SNAP_M', 'true'])
          results.push(await run(command));
        const last = results.at(-1)!;
        const raw = await manager.readOutput({ command_id: results[1]!.command_id, view: 'raw' });
        const page = await manager.readOutput({ command_id: results[1]!.command_id, offset: 0 });
        const screen = await attachment.screen();
        expect(raw.output).toContain('visible');
        expect(page.output).toContain('visible');
        await waitFor(() => seen.includes('visible'));
        const everything = JSON.stringify([results, raw, page, screen, seen, last]);
        expect(everything).not.toContain('6973');
        expect(everything).not.toMatch(/;D;c_/);
      } finally {
        attachment.detach();
      }
    });

    it('runs a background command, lists it, and kills its whole tree', async () => {
      const bg = await run("sh -c '(setsid sleep 301 &); sleep 302 & sleep 303'", { background: true });
      expect(bg.status).toBe('partial');
      expect(bg.reason).toBe('background');
      const listed = manager.listCommands({ filter: bg.command_id }).processes;
      expect(listed.map((p) => p.command_id)).toContain(bg.command_id);
      await waitFor(async () => (await setup.countWithCommandId(bg.command_id)) >= 3);
      const killed = await manager.killProcess({ command_id: bg.command_id, grace_s: 2 });
      expect(killed.result).toBe('killed');
      expect(killed.survivors).toEqual([]);
      expect(await setup.countWithCommandId(bg.command_id)).toBe(0);
      const after = await manager.readOutput({ command_id: bg.command_id, pause_timeout: 0 });
      expect(after.status).toBe('completed');
      expect(after.state).toBe('killed');
    });

    it('lists what an ended command left running (escaped_pids) the same way every time, and kill_process kills it', async () => {
      const escapedOf = async (id: string) =>
        (await manager.listProcesses({ filter: id })).processes.find((p) => p.command_id === id)
          ?.escaped_pids;
      const plain = await run('echo plain');
      expect(plain.status).toBe('completed');
      expect(await escapedOf(plain.command_id)).toBeUndefined();
      // Each leaves exactly one process running (a sleep), through a chain of short-lived forks that may
      // still be under way when the command ends (setsid forks when it leads a job's group).
      const leavers = [
        { command: `setsid sh -c 'sleep 412 >/dev/null 2>&1 &'; echo started`, background: false },
        { command: `setsid sleep 413 >/dev/null 2>&1 & echo started`, background: false },
        { command: `setsid sh -c 'sleep 414 >/dev/null 2>&1 &'; echo started`, background: true },
        // A background command's own end must not hang up a job it left (it ends before setsid runs).
        { command: `setsid sleep 415 >/dev/null 2>&1 & echo started`, background: true },
        { command: `sleep 416 >/dev/null 2>&1 & echo started`, background: true },
      ];
      for (const { command, background } of leavers) {
        for (let round = 0; round < 3; round++) {
          const r = await run(command, { background });
          expect((await readToEnd(manager, r)).output).toContain('started');
          // Listed at the first asking, right after the end: never missed, never a passing fork.
          const left = await escapedOf(r.command_id);
          expect(left, `${command} (background: ${background}), round ${round}`).toHaveLength(1);
          expect(await setup.countWithCommandId(r.command_id)).toBe(1);
          const killed = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
          expect(killed.result).toBe('killed');
          expect(killed.survivors).toEqual([]);
          expect(await escapedOf(r.command_id)).toBeUndefined();
          expect(await setup.countWithCommandId(r.command_id)).toBe(0);
        }
      }
    });

    it('judges terminal reads from kernel facts the same way on every host (input-wait evidence)', async () => {
      /** Spawns `script`, waits for `ready` in its output, then hands the terminal to `check`. */
      const withProgram = async (script: string, check: (proc: TerminalProcess) => Promise<void>) => {
        const proc = await driver.spawn({
          file: '/bin/sh',
          args: ['-c', script],
          cwd: undefined,
          env: {},
          cols: 80,
          rows: 24,
        });
        let out = '';
        const sub = proc.onData((chunk) => {
          out += new TextDecoder().decode(chunk);
        });
        try {
          const ready = await waitFor(() => (/ready|nopython/.test(out) ? out : undefined));
          if (!ready.includes('nopython')) await check(proc);
        } finally {
          sub.dispose();
          await proc.kill({ signal: 'SIGKILL', graceMs: 0 }).catch(() => undefined);
          proc.dispose();
        }
      };
      const settlesOn = (want: InputWaitEvidence) => async (proc: TerminalProcess) => {
        expect(proc.inputWaitEvidence).toBeDefined();
        await waitFor(async () => (await proc.inputWaitEvidence!()) === want);
      };
      await withProgram('echo ready; read x', settlesOn('blocked_read'));
      const py = (code: string) =>
        `command -v python3 >/dev/null || { echo nopython; exit; }; exec python3 -c ${JSON.stringify(code)}`;
      await withProgram(
        py('import sys; print("ready", flush=True); sys.stdin.readline()'),
        settlesOn('blocked_read'),
      );
      // getpass, sudo, ssh: a read of /dev/tty, the process's controlling terminal, is a read of this one.
      await withProgram(
        py('print("ready", flush=True); open("/dev/tty").readline()'),
        settlesOn('blocked_read'),
      );
      await withProgram(
        py('import select, sys; print("ready", flush=True); select.select([sys.stdin], [], [])'),
        settlesOn('polling'),
      );
      await withProgram(
        py('import select; t = open("/dev/tty"); print("ready", flush=True); select.select([t], [], [])'),
        settlesOn('polling'),
      );
      // A read of a TCP socket sleeps in wait_woken too, but it is no terminal read (`no` where the system
      // call is known, `unknown` from ps facts, which cannot tell).
      await withProgram(
        py(
          'import socket; l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(); c = socket.create_connection(l.getsockname()); s, _ = l.accept(); print("ready", flush=True); s.recv(1)',
        ),
        async (proc) => {
          for (let i = 0; i < 5; i++) expect(['no', 'unknown']).toContain(await proc.inputWaitEvidence!());
        },
      );
      await withProgram('echo ready; exec sleep 30', async (proc) => {
        for (let i = 0; i < 3; i++) expect(await proc.inputWaitEvidence!()).toBe('no');
      });
    });

    it('bounds a flood and pages every line exactly', async () => {
      const flood = await run('yes | head -c 5000000', { pause_timeout: 20, total_timeout: 120 });
      expect(flood.status).toBe('completed');
      expect(flood.output_info.truncated).toBe(true);
      expect(flood.output.length).toBeLessThan(40_000);
      expect(flood.output).toMatch(/lines omitted/);
      const seq = await run('seq 1 20000', { pause_timeout: 20, total_timeout: 120 });
      expect(seq.status).toBe('completed');
      const page = await manager.readOutput({ command_id: seq.command_id, offset: 19990, length: 10 });
      expect(page.output.split('\n').slice(1)).toEqual(
        Array.from({ length: 10 }, (_, i) => String(19991 + i)),
      );
      expect(page.page?.total_lines).toBe(20000);
    });

    /** Skips the test when the host lacks `program` (e.g. python3, vim, less). */
    const requireProgram = async (ctx: TestContext, program: string) => {
      const found = await run(`command -v ${program} >/dev/null && echo yes || echo no`);
      if (found.output !== 'yes') ctx.skip();
    };
    /** A fresh directory on the host, for files a test makes there. */
    const hostDir = async () => (await run('mktemp -d')).output;

    describe('capabilities', () => {
      /** Spawns an interactive shell of its own on a new terminal, hands it to `check`, then kills it. */
      const withShell = async (args: string[], check: (proc: TerminalProcess) => Promise<void>) => {
        const proc = await driver.spawn({
          file: '/bin/bash',
          args,
          cwd: undefined,
          env: {},
          cols: 80,
          rows: 24,
        });
        try {
          await check(proc);
        } finally {
          await proc.kill({ signal: 'SIGKILL', graceMs: 0 }).catch(() => undefined);
          proc.dispose();
        }
      };
      const reading = async (proc: TerminalProcess) =>
        ['blocked_read', 'polling'].includes((await proc.inputWaitEvidence?.()) ?? '') ? true : undefined;

      it(`offers every capability the engine requires (${REQUIRED_CAPABILITIES.join(', ')})`, async () => {
        await withShell(['--norc', '--noprofile', '-c', 'sleep 30'], async (proc) => {
          for (const capability of REQUIRED_CAPABILITIES)
            expect(typeof proc[capability], capability).toBe('function');
        });
      });

      it("names every process of the terminal's foreground group, also its first process after exec (foreground programs)", async () => {
        await withShell(
          ['--norc', '--noprofile', '-c', 'exec -a notashell /bin/bash --norc --noprofile -i'],
          async (proc) => {
            // The shell waits for input on the terminal (kernel evidence): its own group is the foreground.
            await waitFor(() => reading(proc));
            const names = (await proc.foregroundPrograms?.()) ?? [];
            expect(names).toContain('notashell');
            expect(names).toContain('bash');
            // A job the shell starts becomes the foreground group, named first.
            await proc.write('sleep 30\r', 1000);
            await waitFor(async () => (await proc.foregroundPrograms?.())?.[0] === 'sleep');
            expect(await proc.foregroundPrograms?.()).not.toContain('notashell');
          },
        );
      });
    });

    describe('typed-input policy', () => {
      let guarded: SessionManager;
      let gsid: string;
      let work: string;
      const grun = (command: string, extra: Record<string, unknown> = {}) =>
        guarded.execute({ command, session_id: gsid, pause_timeout: 10, total_timeout: 30, ...extra });
      /** Whether the file the policy protects is still there. */
      const victimThere = async () => (await run(`test -e ${work}/victim && echo yes || echo no`)).output;

      beforeAll(async () => {
        // A sandboxed session's /tmp is its own: the guarded session (a second sandbox) would not see it.
        work = (await run(setup.sandbox ? 'mktemp -d "$HOME/.conch-conformance.XXXXXX"' : 'mktemp -d'))
          .output;
        await run(`printf precious > ${work}/victim`);
        // The driver is borrowed: this manager's shutdown must not dispose it (a remote host's driver goes
        // with the last session of the manager that closes it).
        const borrowed = new Proxy(driver, {
          get(target, key) {
            if (key === 'dispose') return async () => {};
            const value = Reflect.get(target, key, target) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
        guarded = new SessionManager({
          clock: createRealClock(),
          localDriver: borrowed,
          policy: setup.denyRm(),
          defaults: { cwd: work, writeDeadlineMs: 1500 },
        });
        gsid = (
          await guarded.openSession(borrowed, {
            kind: setup.kind,
            shell: '/bin/bash',
            cwd: work,
            ...(setup.sandbox ? { sandbox: setup.sandbox } : {}),
          })
        ).id;
      }, 60_000);

      afterAll(async () => {
        await guarded?.shutdown();
        if (work) await run(`rm -rf ${work}`);
      }, 60_000);

      it('denies rm through execute, and nothing runs', async () => {
        await expect(grun('true; rm victim')).rejects.toMatchObject({ code: 'POLICY_DENIED' });
        expect(await victimThere()).toBe('yes');
      });

      it('refuses rm typed into a bash started by an allowed command, even in pieces', async () => {
        const inner = await grun('bash --norc --noprofile -i', { pause_timeout: 2 });
        expect(inner.status).toBe('partial');
        await expect(
          guarded.respond({ command_id: inner.command_id, text: 'rm victim' }),
        ).rejects.toMatchObject({
          code: 'POLICY_DENIED',
        });
        await guarded.respond({ command_id: inner.command_id, text: 'r', enter: false, pause_timeout: 0.2 });
        await expect(
          guarded.respond({ command_id: inner.command_id, text: 'm victim' }),
        ).rejects.toMatchObject({
          code: 'POLICY_DENIED',
        });
        const ok = await guarded.respond({
          command_id: inner.command_id,
          text: 'echo still-$((40+2))',
          pause_timeout: 1,
        });
        expect(ok.output).toContain('still-42');
        expect(await victimThere()).toBe('yes');
        const exit = await guarded.respond({ command_id: inner.command_id, text: 'exit', pause_timeout: 5 });
        expect(exit.status).toBe('completed');
      });

      it("refuses rm typed into a shell in the terminal's own first process group (an isolated command)", async () => {
        const busy = await grun('sleep 60', { pause_timeout: 0.3 });
        // `exec`: the shell becomes the terminal's first process, in the terminal's own process group.
        const inner = await grun('exec bash --norc --noprofile -i', { pause_timeout: 2 });
        expect(inner.isolated).toBe(true);
        await expect(
          guarded.respond({ command_id: inner.command_id, text: 'rm victim' }),
        ).rejects.toMatchObject({
          code: 'POLICY_DENIED',
        });
        expect(await victimThere()).toBe('yes');
        await guarded.respond({ command_id: inner.command_id, text: 'exit', pause_timeout: 5 });
        await guarded.killProcess({ command_id: busy.command_id });
      });

      it('lets a non-shell program receive the same text (it is data there, not a command)', async (ctx) => {
        await requireProgram(ctx, 'python3');
        const r = await grun(`python3 -c 'print("got", input("> "))'`);
        const done = await guarded.respond({ command_id: r.command_id, text: 'rm victim' });
        expect(done.output).toContain('got rm victim');
        expect(await victimThere()).toBe('yes');
      });

      it('refuses type-ahead and line-editing keys typed into a shell', async () => {
        const r = await grun('sleep 60; bash --norc', { pause_timeout: 0.3 });
        await expect(guarded.respond({ command_id: r.command_id, text: 'rm victim' })).rejects.toMatchObject({
          code: 'POLICY_DENIED',
          message: expect.stringContaining('type-ahead'),
        });
        await guarded.killProcess({ command_id: r.command_id });
        const inner = await grun('bash --norc --noprofile -i', { pause_timeout: 2 });
        await guarded.respond({ command_id: inner.command_id, text: 'echo rm victim', pause_timeout: 0.5 });
        await expect(
          guarded.sendControl({ command_id: inner.command_id, key: ['up', 'home', 'delete', 'enter'] }),
        ).rejects.toMatchObject({ code: 'POLICY_DENIED' });
        expect(await victimThere()).toBe('yes');
        await guarded.respond({ command_id: inner.command_id, text: 'exit', pause_timeout: 5 });
      });
    });

    describe('prompts', () => {
      it('reports python input() as awaiting_input and finishes on respond', async (ctx) => {
        await requireProgram(ctx, 'python3');
        const r = await run(`python3 -c 'n = input("Your name: "); print("hello", n)'`);
        expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', prompt: { kind: 'text' } });
        expect(r.prompt?.text).toContain('Your name:');
        const done = await manager.respond({ command_id: r.command_id, text: 'Ada' });
        expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
        expect(done.output).toContain('hello Ada');
      });

      it('reports a REPL prompt and its answers', async (ctx) => {
        await requireProgram(ctx, 'python3');
        const r = await run('python3 -q');
        expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'repl' } });
        const two = await manager.respond({ command_id: r.command_id, text: '6*7' });
        expect(two.output).toContain('42');
        expect(two.reason).toBe('awaiting_input');
        const end = await manager.sendControl({ command_id: r.command_id, key: 'ctrl+d' });
        expect(end).toMatchObject({ status: 'completed', exit_code: 0 });
      });

      it('reports a prompt read from /dev/tty (getpass, a /dev/tty reader) as awaiting_input', async (ctx) => {
        await requireProgram(ctx, 'python3');
        // Only the prompt can end these waits: silence would take minutes.
        const long = { pause_timeout: 120, total_timeout: 120 };
        const secret = 'tty-secret-Qx7';
        const getpass = await run(
          `python3 -c "import getpass; p = getpass.getpass('Password: '); print('got', len(p))"`,
          long,
        );
        expect(getpass).toMatchObject({
          status: 'partial',
          reason: 'awaiting_input',
          state: 'awaiting_input',
          prompt: { kind: 'password', text: 'Password:' },
        });
        const answered = await manager.respond({
          command_id: getpass.command_id,
          text: secret,
          secret: true,
          ...long,
        });
        expect(answered).toMatchObject({ status: 'completed', exit_code: 0 });
        expect(answered.output).toContain(`got ${secret.length}`);
        const log = await manager.readOutput({ command_id: getpass.command_id, offset: 0 });
        expect(JSON.stringify([getpass, answered, log])).not.toContain(secret);

        const reader = await run(
          `python3 -c "print('Your name: ', end='', flush=True); print('hello', open('/dev/tty').readline().strip())"`,
          long,
        );
        expect(reader).toMatchObject({
          reason: 'awaiting_input',
          prompt: { kind: 'text', text: 'Your name:' },
        });
        const named = await manager.respond({ command_id: reader.command_id, text: 'Ada', ...long });
        expect(named).toMatchObject({ status: 'completed', exit_code: 0 });
        expect(named.output).toContain('hello Ada');
      }, 300_000);

      it('reports a read whose prompt looks like no prompt as awaiting_input, from kernel evidence alone', async () => {
        // No prompt pattern matches "xyz": only the kernel's word that the shell reads the terminal counts.
        const r = await run(`read -p xyz v; echo "got=$v"`, { pause_timeout: 60, total_timeout: 60 });
        expect(r).toMatchObject({
          status: 'partial',
          reason: 'awaiting_input',
          prompt: { kind: 'text', text: 'xyz' },
        });
        const done = await manager.respond({ command_id: r.command_id, text: 'abc' });
        expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
        expect(done.output).toContain('got=abc');
      });

      it('reports a yes/no question', async () => {
        const r = await run(`read -p 'Overwrite file? [y/N] ' a; echo "answer=$a"`);
        expect(r).toMatchObject({ reason: 'awaiting_input', prompt: { kind: 'yes_no' } });
        expect((await manager.respond({ command_id: r.command_id, text: 'y' })).output).toContain('answer=y');
      });

      it('does not take a sleeping program with a prompt-looking line for a prompt', async () => {
        const r = await run(`printf 'Continue? [Y/n] '; sleep 1.5; echo done`, { pause_timeout: 5 });
        expect(r).toMatchObject({ status: 'completed', reason: 'exited' });
      });
    });

    describe('full-screen programs', () => {
      it('edits and saves a file in vim, with the screen view showing vim', async (ctx) => {
        await requireProgram(ctx, 'vim');
        const file = `${await hostDir()}/vim-test.txt`;
        const r = await run(`vim -u NONE -N ${file}`, { pause_timeout: 3 });
        expect(r.status).toBe('partial');
        const screen = await manager.readOutput({
          command_id: r.command_id,
          view: 'screen',
          pause_timeout: 0,
        });
        expect(screen.screen?.alt_screen).toBe(true);
        expect(screen.screen?.rows.some((row) => row.includes('vim-test.txt'))).toBe(true);
        await manager.respond({
          command_id: r.command_id,
          text: 'ihello from conch',
          enter: false,
          pause_timeout: 0.5,
        });
        await manager.sendControl({ command_id: r.command_id, key: 'esc', pause_timeout: 0.5 });
        const typed = await manager.readOutput({
          command_id: r.command_id,
          view: 'screen',
          pause_timeout: 0,
        });
        expect(typed.screen?.rows[0]).toBe('hello from conch');
        const saved = await manager.respond({ command_id: r.command_id, text: ':wq' });
        expect(saved).toMatchObject({ status: 'completed', exit_code: 0 });
        expect((await run(`cat ${file}`)).output).toBe('hello from conch');
      });

      it('reports less as a pager prompt and quits on q; arrows follow DECCKM', async (ctx) => {
        await requireProgram(ctx, 'less');
        const file = `${await hostDir()}/long.txt`;
        await run(`seq -f "line %g" 1 500 > ${file}`);
        const r = await run(`less ${file}`);
        expect(r).toMatchObject({ status: 'partial', reason: 'awaiting_input', prompt: { kind: 'pager' } });
        const down = await manager.sendControl({
          command_id: r.command_id,
          key: ['down', 'down'],
          pause_timeout: 1,
        });
        expect(down.prompt?.kind).toBe('pager');
        const screen = await manager.readOutput({
          command_id: r.command_id,
          view: 'screen',
          pause_timeout: 0,
        });
        expect(screen.screen?.rows[0]).toBe('line 3');
        const q = await manager.sendControl({ command_id: r.command_id, key: 'q' });
        expect(q).toMatchObject({ status: 'completed', exit_code: 0 });
      });

      it('follows a resize of the terminal', async () => {
        manager.getSession(sid).resize(132, 40);
        expect((await run('stty size')).output).toBe('40 132');
        manager.getSession(sid).resize(80, 24);
      });
    });

    describe('signals and processes', () => {
      it('Ctrl+C ends a foreground loop with 130 and the shell keeps working', async () => {
        const r = await run('while true; do echo spin; sleep 0.1; done', { total_timeout: 0.5 });
        expect(r.status).toBe('partial');
        // A loop of builtins and short children: a Ctrl+C that lands while bash forks the next child can be
        // lost inside bash itself (a person would press it again), so allow up to three presses.
        let c = r;
        for (let press = 0; press < 3 && c.status !== 'completed'; press++) {
          c = await manager.sendControl({
            command_id: r.command_id,
            key: '^C',
            pause_timeout: 2,
            total_timeout: 2,
          });
        }
        expect(c).toMatchObject({ status: 'completed', exit_code: 130, signal: 'SIGINT' });
        expect((await run('echo alive')).output).toBe('alive');
      });

      it('kill_process on a foreground job kills the job, not the shell', async () => {
        const r = await run('sleep 300 & sleep 301; echo not-reached', { pause_timeout: 0.3 });
        expect(r.status).toBe('partial');
        await waitFor(async () => (await setup.countWithCommandId(r.command_id)) >= 2);
        const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
        expect(k.result).toBe('killed');
        expect(await setup.countWithCommandId(r.command_id)).toBe(0);
        const after = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
        expect(after).toMatchObject({ status: 'completed', state: 'killed' });
        expect((await run('echo shell-still-here')).output).toBe('shell-still-here');
      });

      it('a command typed right after kill_process returns runs whole (nothing of the kill reaches it)', async () => {
        for (let round = 0; round < 3; round++) {
          const r = await run('sleep 300', { pause_timeout: 0.2 });
          expect(r.status).toBe('partial');
          expect((await manager.killProcess({ command_id: r.command_id, grace_s: 1 })).result).toBe('killed');
          const next = await run(`echo round-${round}`);
          expect(next, `round ${round}`).toMatchObject({
            status: 'completed',
            output: `round-${round}`,
            exit_code: 0,
          });
          expect(next.isolated).toBeUndefined();
        }
      });

      it('kill_process right after a command returned at once kills that command, not nothing', async () => {
        // pause_timeout 0 returns as soon as the line is typed: the shell may already run the command while
        // its start marker is still on its way to conch.
        for (let round = 0; round < 5; round++) {
          const r = await run('sleep 300', { pause_timeout: 0 });
          expect(r.status).toBe('partial');
          expect((await manager.killProcess({ command_id: r.command_id, grace_s: 1 })).result).toBe('killed');
          await waitFor(async () => (await setup.countWithCommandId(r.command_id)) === 0, {
            timeoutMs: 5000,
            what: `round ${round}: the killed sleep is gone`,
          });
          // The session is free again: the next command is typed into its shell and runs whole.
          const next = await run(`echo round-${round}`, { pause_timeout: 5 });
          expect(next, `round ${round}`).toMatchObject({ status: 'completed', output: `round-${round}` });
          expect(next.isolated, `round ${round}`).toBeUndefined();
        }
      });

      it('kill_process on a shell loop ends the loop and frees the session', async () => {
        const r = await run('while true; do echo loop; sleep 0.2; done', { total_timeout: 0.5 });
        expect(r.status).toBe('partial');
        const k = await manager.killProcess({ command_id: r.command_id, grace_s: 1 });
        expect(k.result).toBe('killed');
        const after = await manager.readOutput({ command_id: r.command_id, pause_timeout: 0 });
        expect(after.status).toBe('completed');
        const next = await run('cd / && echo free');
        expect(next).toMatchObject({ output: 'free', cwd: '/' });
        expect(next.isolated).toBeUndefined();
        await run('cd - >/dev/null');
      });

      it('kill_process escalates to SIGKILL for a program that ignores SIGTERM', async () => {
        const r = await run(`trap '' TERM; echo armed; sleep 300`, { background: true });
        await waitFor(async () => (await setup.countWithCommandId(r.command_id)) >= 2);
        const k = await manager.killProcess({ command_id: r.command_id, grace_s: 0.3 });
        expect(k).toMatchObject({ result: 'killed', survivors: [] });
        expect(await setup.countWithCommandId(r.command_id)).toBe(0);
      });

      it('reports the exit signal of a background command', async () => {
        const done = await readToEnd(manager, await run('kill -TERM $$', { background: true }));
        expect(done).toMatchObject({ status: 'completed', state: 'killed', signal: 'SIGTERM' });
      });
    });

    describe('terminal processes', () => {
      /** Spawns `script` on its own terminal and collects its output. */
      const spawnScript = async (script: string) => {
        const proc = await driver.spawn({
          file: '/bin/sh',
          args: ['-c', script],
          cwd: undefined,
          env: {},
          cols: 80,
          rows: 24,
        });
        const seen = { output: '' };
        proc.onData((chunk) => {
          seen.output += new TextDecoder().decode(chunk);
        });
        return { proc, seen };
      };

      it('times out a write to a program that stops reading, instead of blocking', async () => {
        const { proc, seen } = await spawnScript('stty raw -echo; echo ready; exec sleep 60');
        try {
          await waitFor(() => seen.output.includes('ready'));
          const chunk = 'x'.repeat(1 << 20);
          let error: unknown;
          // A channel's window and the host's buffers take a few MiB; then writes must time out, not hang.
          for (let i = 0; i < 64 && error === undefined; i++) {
            error = await proc.write(chunk, 1000).then(
              () => undefined,
              (e: unknown) => e,
            );
          }
          expect(error).toMatchObject({ code: 'WRITE_TIMEOUT' });
          const exited = new Promise((resolve) => proc.onExit(resolve));
          const report = await proc.kill({ signal: 'SIGTERM', graceMs: 1000 });
          expect(report.result).toBe('killed');
          expect(await exited).toMatchObject({ signal: 'SIGTERM' });
          await expect(proc.write('late', 1000)).rejects.toMatchObject({ code: 'COMMAND_FINISHED' });
        } finally {
          proc.dispose();
        }
      });

      it("signals the terminal's foreground process group, maps the exit signal and replays it to a late listener", async () => {
        const { proc, seen } = await spawnScript('echo ready; sleep 60; echo not-reached');
        try {
          expect(proc.pid).toBeGreaterThan(1);
          const exited = new Promise((resolve) => proc.onExit(resolve));
          await waitFor(() => seen.output.includes('ready'));
          await waitFor(async () => (await proc.inputWaitEvidence?.()) === 'no');
          proc.signal('SIGTERM');
          expect(await exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
          const late = await new Promise((resolve) => proc.onExit(resolve));
          expect(late).toEqual({ exitCode: null, signal: 'SIGTERM' });
          expect(seen.output).not.toContain('not-reached');
        } finally {
          proc.dispose();
        }
      });
    });

    it('closes the session when its shell exits, and says so afterwards', async () => {
      const other = await manager.openSession(driver, {
        kind: setup.kind,
        shell: '/bin/bash',
        ...(setup.sandbox ? { sandbox: setup.sandbox } : {}),
      });
      const r = await manager.execute({ command: 'exit 7', session_id: other.id, pause_timeout: 10 });
      expect(r.status).toBe('completed');
      expect(r.exit_code).toBe(7);
      const info = manager.listSessions().find((s) => s.session_id === other.id);
      expect(info?.state).toBe('closed');
      const err = await manager.execute({ command: 'true', session_id: other.id }).catch((e: unknown) => e);
      expect(ConchError.is(err) && err.code).toBe('SESSION_CLOSED');
      await manager.closeSession(other.id);
    });
  });
}
