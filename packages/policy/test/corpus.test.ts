import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Policy } from '../src/index.js';
import { CORPUS, type CorpusEntry } from '../src/testing/corpus.js';
import { giveToNobody, makeSandboxRoot, RUN_AS_NOBODY } from './bash-sandbox.js';

const denyRm = new Policy({ deny: ['rm'] });
const allowGitLs = new Policy({ allow: ['git', 'ls'] });

const verdict = (p: Policy, command: string) => (p.evaluate(command).decision === 'allow' ? 'A' : 'D');

describe('adversarial corpus: verdicts', () => {
  it('has at least 120 commands', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(120);
    expect(new Set(CORPUS.map((e) => e.command)).size).toBe(CORPUS.length);
  });

  it.each(CORPUS.map((e) => [e.technique, e] as const))('%s', (_t, e) => {
    expect({
      command: e.command,
      denyRm: verdict(denyRm, e.command),
      allowGitLs: verdict(allowGitLs, e.command),
    }).toEqual({
      command: e.command,
      denyRm: e.denyRm,
      allowGitLs: e.allowGitLs,
    });
  });
});

/** What really happened to `victim` when bash ran an entry. */
interface RunResult {
  readonly entry: CorpusEntry;
  readonly survived: boolean;
  readonly timedOut: boolean;
}

const ROOT = makeSandboxRoot('conch-policy-corpus-');

/**
 * Runs one command with bash from a script file, in a fresh directory holding `victim`, `script.sh`
 * (`rm victim`) and `bin/rm` (a link to the real rm), with a private HOME. As root, it runs as nobody so
 * that a mistake in the corpus cannot reach beyond the directory.
 */
function runInSandbox(entry: CorpusEntry, index: number): Promise<RunResult> {
  const base = join(ROOT, String(index));
  const work = join(base, 'work');
  const home = join(base, 'home');
  mkdirSync(join(work, 'bin'), { recursive: true });
  mkdirSync(home);
  writeFileSync(join(work, 'victim'), 'sacrificial\n');
  writeFileSync(join(work, 'script.sh'), 'rm victim\n');
  symlinkSync('/bin/rm', join(work, 'bin', 'rm'));
  const scriptFile = join(base, 'cmd.sh');
  writeFileSync(scriptFile, entry.command);
  giveToNobody([
    base,
    work,
    home,
    join(work, 'bin'),
    join(work, 'victim'),
    join(work, 'script.sh'),
    scriptFile,
  ]);
  return new Promise((resolve) => {
    const child = spawn('bash', [scriptFile], {
      cwd: work,
      detached: true,
      stdio: 'ignore',
      env: {
        // Absolute entries only: `find -execdir` refuses to run with a relative or empty PATH entry,
        // which the environment of `npm test` can contain.
        PATH: (process.env.PATH ?? '/usr/bin:/bin')
          .split(':')
          .filter((dir) => dir.startsWith('/'))
          .join(':'),
        HOME: home,
        LANG: 'C',
        TERM: 'dumb',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
      },
      ...RUN_AS_NOBODY,
    });
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, 4000);
    child.on('error', () => undefined);
    child.on('close', () => {
      clearTimeout(timer);
      // Give background children (`&`, coproc, process substitution) a moment, then stop them.
      setTimeout(() => {
        killGroup();
        resolve({ entry, survived: existsSync(join(work, 'victim')), timedOut });
      }, 150);
    });
  });
}

async function runAll(entries: readonly CorpusEntry[], concurrency: number): Promise<RunResult[]> {
  const results: RunResult[] = new Array(entries.length);
  let next = 0;
  const worker = async () => {
    while (next < entries.length) {
      const i = next++;
      results[i] = await runInSandbox(entries[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

describe('adversarial corpus: run by real bash', () => {
  let results: RunResult[] = [];

  beforeAll(async () => {
    results = await runAll(CORPUS, 24);
    // CORPUS_REPORT=1 lists what bash really did with each command (to mark new entries `deletes`).
    if (process.env.CORPUS_REPORT) {
      for (const r of results) {
        console.log(
          r.survived ? 'kept   ' : 'deleted',
          r.timedOut ? '(timeout)' : '',
          JSON.stringify(r.entry.command),
        );
      }
    }
  }, 60_000);

  afterAll(() => {
    rmSync(ROOT, { recursive: true, force: true });
  });

  it('ran every command in its own directory', () => {
    expect(results).toHaveLength(CORPUS.length);
    expect(readdirSync(ROOT)).toHaveLength(CORPUS.length);
  });

  it('whatever "deny rm" allowed left the victim file in place', () => {
    const broken = results.filter((r) => r.entry.denyRm === 'A' && !r.survived).map((r) => r.entry.command);
    expect(broken).toEqual([]);
  });

  it('whatever "allow only git and ls" allowed left the victim file in place', () => {
    const broken = results
      .filter((r) => r.entry.allowGitLs === 'A' && !r.survived)
      .map((r) => r.entry.command);
    expect(broken).toEqual([]);
  });

  it('the attacks marked as deleting really delete the victim in bash (so the corpus tests real bypasses)', () => {
    const harmless = results
      .filter((r) => r.entry.deletes === true && r.survived)
      .map((r) => r.entry.command);
    expect(harmless).toEqual([]);
  });
});
