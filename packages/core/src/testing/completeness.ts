/**
 * The output-completeness suite (reliability): no byte is lost at the end of a fast-exiting command, in
 * every mode — foreground, isolated (the session is busy), background — and when a foreground command
 * ends the session's shell. Each run has a known tail; the bytes missing from the command's log are
 * summed and handed to the driver package, which writes them to the reliability report. Both real
 * drivers run it (see {@link describeOutputCompleteness}).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealClock } from '../clock.js';
import type { Driver, ScreenFactory, SpillStore } from '../driver.js';
import { SessionManager } from '../engine/session-manager.js';
import type { CommandResult } from '../types.js';

/** What a driver package provides to the completeness suite. */
export interface CompletenessSetup {
  /** Session kind of the driver. */
  kind: 'local' | 'ssh';
  /** Creates the driver under test (called once). */
  driver: () => Promise<Driver>;
  /** Releases it (called once, after the suite). */
  teardown?: () => Promise<void>;
  spill: () => SpillStore;
  screen: ScreenFactory;
  /** Runs per mode (50 in the reliability suite). */
  runs: number;
  /** Receives the total of lost bytes once the suite is over. */
  report: (bytesLost: number) => void;
}

const LINES = 20000;
const COMMAND = `seq 1 ${LINES}; printf END`;
/** The whole expected output: `seq` lines and the tail without a newline. */
const EXPECTED = `${Array.from({ length: LINES }, (_, i) => String(i + 1)).join('\n')}\nEND`;
const SHELL_ENDING = "for i in $(seq 1 3000); do echo line $i; done; echo 'FAILED: boom' >&2; exit 1";
const SHELL_ENDING_EXPECTED = `${Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n')}\nFAILED: boom`;

/** Registers the completeness tests (vitest) for one driver. */
export function describeOutputCompleteness(name: string, setup: CompletenessSetup): void {
  describe(`output completeness: ${name}`, () => {
    let manager: SessionManager;
    let driver: Driver;
    let bytesLost = 0;

    beforeAll(async () => {
      driver = await setup.driver();
      manager = new SessionManager({
        clock: createRealClock(),
        localDriver: driver,
        spill: setup.spill(),
        screen: setup.screen,
      });
      // An idle session held for the whole suite: closing the last session of an SSH connection ends it.
      await open();
    }, 60_000);

    afterAll(async () => {
      await manager?.shutdown();
      await setup.teardown?.();
      setup.report(bytesLost);
    }, 60_000);

    const open = async () => (await manager.openSession(driver, { kind: setup.kind, shell: '/bin/bash' })).id;

    /**
     * Waits for the end, then compares the line count and the last line with `expected`; returns the
     * bytes of `expected` missing from the log (the lines not logged, and the last line if it differs).
     */
    async function lostBytes(first: CommandResult, expected: string): Promise<number> {
      let r = first;
      while (r.status !== 'completed')
        r = await manager.readOutput({ command_id: r.command_id, total_timeout: 30 });
      const want = expected.split('\n');
      const last = await manager.readOutput({ command_id: r.command_id, offset: -1 });
      const got = last.output.slice(last.output.lastIndexOf('\n') + 1);
      const total = last.output_info.lines_total;
      let lost = 0;
      for (let i = Math.min(total, want.length); i < want.length; i++) lost += want[i]!.length + 1;
      if (total <= want.length && got !== want[Math.max(0, total - 1)])
        lost += want[Math.max(0, total - 1)]!.length;
      return lost;
    }

    it(`background commands keep their last byte (${setup.runs} runs)`, async () => {
      const sid = await open();
      let lost = 0;
      for (let i = 0; i < setup.runs; i++)
        lost += await lostBytes(
          await manager.execute({ session_id: sid, command: COMMAND, background: true }),
          EXPECTED,
        );
      bytesLost += lost;
      expect(lost).toBe(0);
      await manager.closeSession(sid);
    });

    it(`isolated commands (session busy) keep their last byte (${setup.runs} runs)`, async () => {
      const sid = await open();
      const busy = await manager.execute({ session_id: sid, command: 'read -r line', pause_timeout: 0.2 });
      expect(busy.status).toBe('partial');
      let lost = 0;
      for (let i = 0; i < setup.runs; i++) {
        const r = await manager.execute({ session_id: sid, command: COMMAND, total_timeout: 60 });
        expect(r.isolated).toBe(true);
        lost += await lostBytes(r, EXPECTED);
      }
      bytesLost += lost;
      expect(lost).toBe(0);
      await manager.closeSession(sid);
    });

    it(`foreground commands keep their last byte (${setup.runs} runs)`, async () => {
      const sid = await open();
      let lost = 0;
      for (let i = 0; i < setup.runs; i++)
        lost += await lostBytes(
          await manager.execute({ session_id: sid, command: COMMAND, total_timeout: 60 }),
          EXPECTED,
        );
      bytesLost += lost;
      expect(lost).toBe(0);
      await manager.closeSession(sid);
    });

    it('a foreground command that ends the shell keeps its last line (10 fresh sessions, half after a prompt)', async () => {
      let lost = 0;
      for (let i = 0; i < 10; i++) {
        const sid = await open();
        if (i % 2 === 1) {
          const asked = await manager.execute({
            session_id: sid,
            command: 'read -r -p "name: " n; echo "hi $n"',
          });
          expect(asked.status).not.toBe('completed');
          const answered = await manager.respond({ command_id: asked.command_id, text: 'x' });
          expect(answered.output).toContain('hi x');
        }
        const r = await manager.execute({ session_id: sid, command: SHELL_ENDING, total_timeout: 60 });
        lost += await lostBytes(r, SHELL_ENDING_EXPECTED);
        await manager.closeSession(sid).catch(() => {});
      }
      bytesLost += lost;
      expect(lost).toBe(0);
    });
  });
}
