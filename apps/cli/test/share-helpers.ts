/**
 * Helpers for tests of a session shared by a person (`conch attach`) and an agent (`conch exec`): the agent's
 * calls as JSON, and the programs running under the test's daemon (found in /proc by its CONCH_HOME).
 */

import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { type CliHome, isRunning } from './harness.js';

/** The pids of the live processes (zombies aside) whose `/proc/PID/FILE` holds `text`. */
export function liveProcessesWhose(file: 'cmdline' | 'environ', text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/${file}`, 'latin1').includes(text) && isRunning(Number(entry)))
        pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** The names of the processes started under `home`'s daemon (their environment carries its CONCH_HOME). */
export function programsOfHome(home: CliHome): string[] {
  const names: string[] = [];
  for (const pid of liveProcessesWhose('environ', `CONCH_HOME=${home.env.CONCH_HOME}\0`)) {
    try {
      names.push(readFileSync(`/proc/${pid}/comm`, 'latin1').trim());
    } catch {
      // gone
    }
  }
  return names;
}

/** A result of `conch exec --json`. */
export interface ExecResult {
  status: string;
  state: string;
  output: string;
  exit_code?: number | null;
  isolated?: boolean;
  held_by_person?: boolean;
  command_id: string;
}

/** What `toMatchObject` expects of an agent's command that ran isolated because a person held the terminal. */
export function isolatedForPerson(output: string, exitCode = 0): Partial<ExecResult> {
  return { status: 'completed', exit_code: exitCode, output, isolated: true, held_by_person: true };
}

/** The agent's side of a shared session. */
export interface Shared {
  /** `conch exec --json [-s SESSION] -- COMMAND`. */
  exec(command: string): Promise<ExecResult>;
  /** `conch sessions --json`. */
  sessions(): Promise<Array<Record<string, unknown>>>;
  /** Checks that `conch ps` lists no command waiting for input. */
  expectNoneAwaitingInput(): Promise<void>;
}

/** The agent's side of the session `sessionId` (default: the default session) of `home`'s daemon. */
export function sharedSession(home: CliHome, sessionId?: string): Shared {
  const session = sessionId === undefined ? [] : ['-s', sessionId];
  return {
    async exec(command) {
      const run = await home.conch(['exec', '--json', ...session, '--', command]);
      try {
        return JSON.parse(run.stdout) as ExecResult;
      } catch {
        throw new Error(`conch exec printed no JSON: ${run.stdout} ${run.stderr}`);
      }
    },
    async sessions() {
      const run = await home.conch(['sessions', '--json']);
      const all = (JSON.parse(run.stdout) as { sessions: Array<Record<string, unknown>> }).sessions;
      return sessionId === undefined ? all : all.filter((s) => s.session_id === sessionId);
    },
    async expectNoneAwaitingInput() {
      const run = await home.conch(['ps', '--json']);
      const { processes } = JSON.parse(run.stdout) as {
        processes: Array<{ state: string; command: string }>;
      };
      expect(processes.filter((p) => p.state === 'awaiting_input')).toEqual([]);
    },
  };
}
