// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, where ${…} is parameter expansion.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Policy } from '../src/index.js';
import { type ArithmeticCase, arithmeticCases } from './arithmetic-contexts.js';
import { giveToNobody, makeSandboxRoot, RUN_AS_NOBODY } from './bash-sandbox.js';

const denyRm = new Policy({ deny: ['rm'] });
/** Allows the outer programs of the family and the harmless inner command, not rm. */
const allowOuterAndTouch = new Policy({
  allow: [
    ':',
    'cat',
    'set',
    'declare',
    'typeset',
    'let',
    'test',
    '[',
    'read',
    'printf',
    'unset',
    'echo',
    'touch',
  ],
});

const HARMFUL = 'rm -f victim';
const HARMLESS = 'touch marker';

describe('the arithmetic spellings that deleted a file under "deny rm"', () => {
  it.each([
    "x=(); x['$(rm -f victim)']=1",
    "read -a x <<< 1; : ${x['$(rm -f victim)']}",
    "x=1; echo ${x:'$(rm -f victim)'}",
  ])('%s is denied, naming rm', (command) => {
    const d = denyRm.evaluate(command);
    expect(d.decision).toBe('deny');
    expect(d.commands.map((c) => c.rule)).toContain('deny rm');
    expect(d.commands.map((c) => c.rule)).toContain('policy:arithmetic-injection');
  });

  it.each([
    "x=(); x['$(touch marker)']=1",
    "read -a x <<< 1; : ${x['$(touch marker)']}",
    "x=1; echo ${x:'$(touch marker)'}",
  ])('%s is allowed: the inner command is checked, not the quotes', (command) => {
    expect(denyRm.evaluate(command).decision).toBe('allow');
  });
});

/** What bash did with one spelling, run in its own directory. */
interface Ran {
  readonly spelling: string;
  /** The directory's `victim` is gone. */
  readonly deleted: boolean;
  /** The directory holds `marker`. */
  readonly marked: boolean;
}

const ROOT = makeSandboxRoot('conch-policy-arithmetic-');

/** `text` as one single-quoted shell word. */
const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** The process groups of the bash processes started (each is its own group leader). */
const startedGroups: number[] = [];

/** True while a process of the group `pgid` is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs every spelling with real bash, each in a subshell of its own directory (holding `victim`), a few
 * bash processes side by side. As root they run as nobody, so that a mistake cannot reach beyond ROOT.
 */
async function runWithBash(spellings: readonly string[], workers = 4): Promise<Ran[]> {
  const scripts: string[] = Array.from({ length: workers }, () => '');
  spellings.forEach((spelling, i) => {
    const dir = join(ROOT, String(i));
    mkdirSync(dir);
    writeFileSync(join(dir, 'victim'), 'sacrificial\n');
    giveToNobody([dir, join(dir, 'victim')]);
    scripts[i % workers] += `(cd '${dir}' && eval ${shellQuote(spelling)}) </dev/null >/dev/null 2>&1\n`;
  });
  await Promise.all(
    scripts.map(
      (script, w) =>
        new Promise<void>((resolve, reject) => {
          const file = join(ROOT, `driver-${w}.sh`);
          writeFileSync(file, script);
          const child = spawn('bash', [file], {
            cwd: ROOT,
            detached: true,
            stdio: 'ignore',
            env: { PATH: '/usr/bin:/bin', HOME: ROOT, LANG: 'C' },
            ...RUN_AS_NOBODY,
          });
          if (child.pid !== undefined) startedGroups.push(child.pid);
          child.on('error', reject);
          child.on('close', () => resolve());
        }),
    ),
  );
  return spellings.map((spelling, i) => ({
    spelling,
    deleted: !existsSync(join(ROOT, String(i), 'victim')),
    marked: existsSync(join(ROOT, String(i), 'marker')),
  }));
}

describe('arithmetic contexts (every context × quoting style × expansion kind), checked with real bash', () => {
  const cases = arithmeticCases();
  const evaluated = cases.filter((c) => c.evaluated);
  const notEvaluated = cases.filter((c) => !c.evaluated);
  let harmful = new Map<ArithmeticCase, Ran>();
  let harmless = new Map<ArithmeticCase, Ran>();
  let skipped = new Map<ArithmeticCase, Ran>();

  beforeAll(async () => {
    const spellings = [
      ...evaluated.map((c) => c.spell(HARMFUL)),
      ...evaluated.map((c) => c.spell(HARMLESS)),
      ...notEvaluated.map((c) => c.spell(HARMLESS)),
    ];
    const ran = await runWithBash(spellings);
    const n = evaluated.length;
    harmful = new Map(evaluated.map((c, i) => [c, ran[i]!]));
    harmless = new Map(evaluated.map((c, i) => [c, ran[n + i]!]));
    skipped = new Map(notEvaluated.map((c, i) => [c, ran[2 * n + i]!]));
  }, 120_000);

  afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

  const label = (c: ArithmeticCase, spelling: string) =>
    `${c.context} | ${c.style} | ${c.kind} | ${spelling}`;

  it('leaves no process behind', () => {
    expect(startedGroups).toHaveLength(4);
    expect(startedGroups.filter(groupAlive)).toEqual([]);
  });

  it('covers every context, quoting style and expansion kind', () => {
    expect(evaluated.length).toBeGreaterThan(600);
    expect(new Set(cases.map((c) => `${c.context} ${c.spell(HARMFUL)}`)).size).toBe(cases.length);
  });

  it('each spelling really runs its inner command in bash (the context is real)', () => {
    const notRun = [
      ...[...harmful].filter(([, r]) => !r.deleted).map(([c, r]) => label(c, r.spelling)),
      ...[...harmless].filter(([, r]) => !r.marked).map(([c, r]) => label(c, r.spelling)),
    ];
    expect(notRun).toEqual([]);
  });

  it('where bash does not evaluate a quoting style, the spelling really runs nothing', () => {
    const run = [...skipped].filter(([, r]) => r.marked).map(([c, r]) => label(c, r.spelling));
    expect(run).toEqual([]);
  });

  it('with rm inside, each is denied under "deny rm", naming the rule', () => {
    const allowed = evaluated
      .map((c) => [c, c.spell(HARMFUL)] as const)
      .filter(([, s]) => !denyRm.evaluate(s).commands.some((v) => v.rule === 'deny rm'))
      .map(([c, s]) => label(c, s));
    expect(allowed).toEqual([]);
  });

  /** What a policy decides on a harmless spelling, as expected: allowed, or denied by the case's own rule. */
  const asExpected = (p: Policy, c: ArithmeticCase) => {
    const d = p.evaluate(c.spell(HARMLESS));
    if (c.deniedBy === undefined) return d.decision === 'allow';
    return d.decision === 'deny' && d.commands.every((v) => v.decision === 'allow' || v.rule === c.deniedBy);
  };

  it('with a harmless command inside, each is still allowed under "deny rm"', () => {
    const wrong = evaluated
      .filter((c) => !asExpected(denyRm, c))
      .map((c) => `${label(c, c.spell(HARMLESS))} → ${denyRm.evaluate(c.spell(HARMLESS)).reason}`);
    expect(wrong).toEqual([]);
  });

  it('under an allow list, the inner command needs its own rule', () => {
    const wrong = evaluated.flatMap((c) => {
      const out: string[] = [];
      if (!asExpected(allowOuterAndTouch, c)) out.push(label(c, c.spell(HARMLESS)));
      if (allowOuterAndTouch.evaluate(c.spell(HARMFUL)).decision !== 'deny')
        out.push(label(c, c.spell(HARMFUL)));
      return out;
    });
    expect(wrong).toEqual([]);
  });
});
