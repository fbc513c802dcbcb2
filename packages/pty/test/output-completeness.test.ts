/**
 * Reliability: no byte lost at the end of a fast-exiting command, in every mode (foreground, isolated
 * because the session is busy, background) and when a foreground command ends the session's shell.
 * Each run has a known tail; the lost bytes are summed into `.reliability/output-completeness-local.json`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CommandResult, createRealClock, SessionManager } from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver, type LocalDriver } from '../src/index.js';
import { writeReliabilityReport } from './helpers.js';

const RUNS = 50;
const LINES = 20000;
const COMMAND = `seq 1 ${LINES}; printf END`;
/** The whole expected output: `seq` lines and the tail without a newline. */
const EXPECTED = `${Array.from({ length: LINES }, (_, i) => String(i + 1)).join('\n')}\nEND`;

let driver: LocalDriver;
let manager: SessionManager;
let work: string;
let bytesLost = 0;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'conch-completeness-'));
  driver = createLocalDriver();
  manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    screen: createXtermScreen,
    spill: new FileSpillStore({}),
    defaults: { cwd: work },
  });
});

afterAll(async () => {
  await manager.shutdown();
  rmSync(work, { recursive: true, force: true });
  writeReliabilityReport('output-completeness-local', { bytesLost });
});

/**
 * Waits for the end, then compares the line count and the last line with `expected`; returns the bytes of
 * `expected` missing from the log (the lines not logged, and the last line if it differs).
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
  if (total === want.length && got !== want[want.length - 1]) lost += want[want.length - 1]!.length;
  return lost;
}

describe('output completeness (local)', () => {
  it(`background commands keep their last byte (${RUNS} runs)`, async () => {
    const s = await manager.createLocal({});
    let lost = 0;
    for (let i = 0; i < RUNS; i++)
      lost += await lostBytes(
        await manager.execute({ session_id: s.session_id, command: COMMAND, background: true }),
        EXPECTED,
      );
    bytesLost += lost;
    expect(lost).toBe(0);
    await manager.closeSession(s.session_id);
  });

  it(`isolated commands (session busy) keep their last byte (${RUNS} runs)`, async () => {
    const s = await manager.createLocal({});
    const busy = await manager.execute({
      session_id: s.session_id,
      command: 'read -r line',
      pause_timeout: 0.2,
    });
    expect(busy.status).toBe('partial');
    let lost = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await manager.execute({ session_id: s.session_id, command: COMMAND, total_timeout: 60 });
      expect(r.isolated).toBe(true);
      lost += await lostBytes(r, EXPECTED);
    }
    bytesLost += lost;
    expect(lost).toBe(0);
    await manager.closeSession(s.session_id);
  });

  it(`foreground commands keep their last byte (${RUNS} runs)`, async () => {
    const s = await manager.createLocal({});
    let lost = 0;
    for (let i = 0; i < RUNS; i++)
      lost += await lostBytes(
        await manager.execute({ session_id: s.session_id, command: COMMAND, total_timeout: 60 }),
        EXPECTED,
      );
    bytesLost += lost;
    expect(lost).toBe(0);
    await manager.closeSession(s.session_id);
  });

  it('a foreground command that ends the shell keeps its last line (10 fresh sessions)', async () => {
    const expected = `${Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n')}\nFAILED: boom`;
    let lost = 0;
    for (let i = 0; i < 10; i++) {
      const s = await manager.createLocal({});
      const r = await manager.execute({
        session_id: s.session_id,
        command: "for i in $(seq 1 3000); do echo line $i; done; echo 'FAILED: boom' >&2; exit 1",
        total_timeout: 60,
      });
      lost += await lostBytes(r, expected);
      await manager.closeSession(s.session_id).catch(() => {});
    }
    bytesLost += lost;
    expect(lost).toBe(0);
  });
});
