import { parse } from 'unbash';
import type { Invocation, ProgramHandler, Walk } from './handler-api.js';
import { dynamicScriptIssue, protectedAssignmentIssues } from './issues.js';
import { scanOptions } from './option-scan.js';
import type { CommandRunner } from './programs.js';
import { isStdinRedirect, resolveStdin, stdinOf } from './stdin.js';
import { type Arg, assignmentToArg, syntheticArg, wordToArg } from './words.js';

/**
 * Handlers of wrappers: programs that run a command given in their words (`env`, `nice`, `timeout`,
 * `sudo`, `xargs`, `su -c` …), each reading its own options to find where the command starts, and the
 * programs of the `COMMAND_RUNNERS` and `SCHEDULERS` tables.
 */

/** A wrapper whose only options are flags, or those of `table`: the command follows them. */
function afterOptions(table: Parameters<typeof scanOptions>[2] = {}): ProgramHandler {
  return (invocation, walk) =>
    walk.runAfterOptions(invocation, invocation.args, scanOptions(invocation.args, 1, table));
}

/** `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=value…] COMMAND`. */
const env: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, {
    short: 'uCSP',
    long: ['--unset', '--chdir', '--split-string'],
    env: true,
  });
  const split = scan.values.get('S') ?? scan.values.get('--split-string');
  if (scan.dynamic || split === undefined) {
    walk.runAfterOptions(invocation, args, scan);
    return;
  }
  const words = split.isStatic ? splitEnvString(split.value) : undefined;
  if (words === undefined) {
    finding.transparent = true;
    finding.issues.push({
      rule: 'policy:dynamic-name',
      message: `the env -S string "${split.text}" could not be split into static words`,
    });
    return;
  }
  finding.issues.push(...protectedAssignmentIssues(scan.assignments));
  // -S words come first; their own leading assignments are environment too.
  const command = [...words.map((w) => syntheticArg(w)), ...args.slice(scan.index)];
  walk.runAfterOptions(invocation, command, scanOptions(command, 0, { env: true }));
};

/** Splits an `env -S` string into words (quotes and backslashes as env does); undefined if it expands. */
function splitEnvString(text: string): string[] | undefined {
  if (/\$/.test(text)) return undefined;
  const ast = parse(text);
  if (ast.errors !== undefined && ast.errors.length > 0) return undefined;
  const statement = ast.commands[0];
  if (ast.commands.length !== 1 || statement === undefined || statement.command.type !== 'Command')
    return undefined;
  const command = statement.command;
  if (command.redirects.length > 0) return undefined;
  const words: Arg[] = [];
  for (const prefix of command.prefix) if (prefix.type === 'Assignment') words.push(assignmentToArg(prefix));
  if (command.name) words.push(wordToArg(command.name));
  for (const word of command.suffix) {
    if (word.type === 'Word') words.push(wordToArg(word));
    else if (word.type === 'Assignment') words.push(assignmentToArg(word));
  }
  if (!words.every((w) => w.isStatic)) return undefined;
  return words.map((w) => w.value);
}

/** `command [-pvV] COMMAND`: `-v`/`-V` only look the name up. */
const command: ProgramHandler = (invocation, walk) => {
  const scan = scanOptions(invocation.args, 1, {});
  if (scan.flags.has('v') || scan.flags.has('V')) return;
  walk.runAfterOptions(invocation, invocation.args, scan);
};

/** `exec [-a NAME] [COMMAND]`: without a command, redirected input becomes the shell's next commands. */
const exec: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, { short: 'a' });
  if (!scan.dynamic && scan.index >= args.length && !finding.openEnded) {
    finding.transparent = true;
    if (invocation.redirects.some(isStdinRedirect)) {
      finding.issues.push({
        rule: 'policy:exec-stdin',
        message: '"exec" with its input redirected makes the shell read its next commands from there',
      });
    }
    return;
  }
  walk.runAfterOptions(invocation, args, scan);
};

/** `timeout [options] DURATION COMMAND`. */
const timeout: ProgramHandler = (invocation, walk) => {
  const scan = scanOptions(invocation.args, 1, { short: 'sk', long: ['--signal', '--kill-after'] });
  if (!scan.dynamic) scan.index++; // the duration
  walk.runAfterOptions(invocation, invocation.args, scan);
};

/** `ionice [options] COMMAND`; `-p`/`-P`/`-u` change running processes instead. */
const ionice: ProgramHandler = (invocation, walk) => {
  const scan = scanOptions(invocation.args, 1, {
    short: 'cnpPu',
    long: ['--class', '--classdata', '--pid', '--pgid', '--uid'],
  });
  if (['p', 'P', 'u', '--pid', '--pgid', '--uid'].some((o) => scan.flags.has(o))) return;
  walk.runAfterOptions(invocation, invocation.args, scan);
};

/** `taskset MASK COMMAND`; `-p` changes a running process instead. */
const taskset: ProgramHandler = (invocation, walk) => {
  const scan = scanOptions(invocation.args, 1, {});
  if (scan.flags.has('p') || scan.flags.has('--pid')) return;
  if (!scan.dynamic) scan.index++; // the mask or cpu list
  walk.runAfterOptions(invocation, invocation.args, scan);
};

/** `chroot [options] ROOT [COMMAND]`; without a command it starts a shell reading its input. */
const chroot: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, { long: ['--userspec', '--groups'] });
  if (!scan.dynamic) scan.index++; // the new root
  if (!scan.dynamic && scan.index >= args.length && !finding.openEnded) {
    walk.runShellInput(invocation, 'chroot');
    return;
  }
  walk.runAfterOptions(invocation, args, scan);
};

/** `jobs -x COMMAND ARGS` runs COMMAND with job specs replaced. */
const jobs: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const rest = args.slice(1);
  const x = rest.findIndex((a) => a.isStatic && /^-[a-z]*x/.test(a.value));
  if (x >= 0) walk.runAfterOptions(invocation, args, scanOptions(args, x + 2, {}));
  else if (rest.some((a) => !a.isStatic)) {
    finding.issues.push({
      rule: 'policy:dynamic-name',
      message: '"jobs" with arguments only known at run time could run a command (-x)',
    });
  }
};

/** `busybox APPLET ARGS`. */
const busybox: ProgramHandler = (invocation, walk) => {
  const next = invocation.args[1];
  if (next === undefined || (next.isStatic && next.value.startsWith('-'))) return;
  walk.runCommand(invocation, invocation.args.slice(1), 1);
};

/** `xargs [options] [COMMAND]`: runs COMMAND (default `echo`) with arguments read from its input. */
const xargs: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, {
    short: 'adEILnPs',
    optionalShort: 'eil',
    long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
  });
  if (scan.dynamic) {
    walk.runAfterOptions(invocation, args, scan, true);
    return;
  }
  let inner = args.slice(scan.index);
  let offset: number | undefined = scan.index;
  if (inner.length === 0) {
    inner = [syntheticArg('echo')];
    offset = undefined;
  }
  const replace =
    scan.values.get('I')?.value ??
    (scan.flags.has('i') ? scan.values.get('i')?.value || '{}' : undefined) ??
    (scan.flags.has('--replace') ? scan.values.get('--replace')?.value || '{}' : undefined);
  if (replace !== undefined && replace !== '') {
    inner = inner.map((a) => (a.value.includes(replace) ? { ...a, isStatic: false } : a));
  }
  finding.transparent = true;
  walk.invokeInner(invocation, inner, { offsetInParent: offset, via: 'xargs', openEnded: true });
};

/** `sudo [options] [NAME=value…] COMMAND`; `-s`/`-i` without a command start a shell reading its input. */
const sudo: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, {
    short: 'CDghpRrTtUu',
    long: [
      '--close-from',
      '--chdir',
      '--group',
      '--host',
      '--prompt',
      '--chroot',
      '--role',
      '--command-timeout',
      '--type',
      '--other-user',
      '--user',
    ],
    identifierAssignments: true,
  });
  if (['e', 'l', '--edit', '--list'].some((o) => scan.flags.has(o))) return;
  if (!scan.dynamic && scan.index >= args.length && !finding.openEnded) {
    finding.issues.push(...protectedAssignmentIssues(scan.assignments));
    if (['s', 'i', '--shell', '--login'].some((o) => scan.flags.has(o)))
      walk.runShellInput(invocation, 'sudo -s');
    return;
  }
  walk.runAfterOptions(invocation, args, scan);
  finding.transparent = false; // running something as another user needs its own allow rule
};

/** `doas [-u USER] [-s | COMMAND]`. */
const doas: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const scan = scanOptions(args, 1, { short: 'uC' });
  if (scan.flags.has('C')) return;
  if (!scan.dynamic && scan.index >= args.length && !finding.openEnded) {
    if (scan.flags.has('s')) walk.runShellInput(invocation, 'doas -s');
    return;
  }
  walk.runAfterOptions(invocation, args, scan);
  finding.transparent = false;
};

/** `su`/`runuser`: `-c STRING` anywhere (su permutes its options), `-s PROGRAM`, or a shell reading its input. */
const su: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  for (let i = 1; i < args.length; i++) {
    const word = args[i]!;
    if (!word.isStatic) {
      finding.issues.push(dynamicScriptIssue(finding.name, `"${word.text}" is only known at run time`));
      return;
    }
    const v = word.value;
    const m = /^--(?:session-)?command=(.*)$/s.exec(v);
    if (m) {
      walk.runShellString(invocation, [syntheticArg(m[1]!)], `${finding.name} -c`);
      finding.transparent = false;
      return;
    }
    if (v === '-c' || v === '--command' || v === '--session-command') {
      walk.runShellString(invocation, args.slice(i + 1, i + 2), `${finding.name} -c`);
      finding.transparent = false;
      return;
    }
    if (/^-[a-zA-Z]*c/.test(v) && !v.startsWith('--')) {
      const attached = v.slice(v.indexOf('c') + 1);
      walk.runShellString(
        invocation,
        attached ? [syntheticArg(attached)] : args.slice(i + 1, i + 2),
        `${finding.name} -c`,
      );
      finding.transparent = false;
      return;
    }
    if (
      /^-[a-zA-Z]*[gGsw]$/.test(v) ||
      ['--group', '--supp-group', '--shell', '--whitelist-environment'].includes(v)
    )
      i++;
  }
  // `su -s PROGRAM`, `runuser -u USER COMMAND…`: the program it runs is one of its words.
  runCommandRunner(invocation, walk, { everyWord: true });
  walk.runShellInput(invocation, finding.name);
};

/** `watch [options] STRING…` (a shell string) or `watch -x COMMAND…`. */
const watch: ProgramHandler = (invocation, walk) => {
  const { args } = invocation;
  const scan = scanOptions(args, 1, { short: 'nq', long: ['--interval', '--equexit'] });
  if (scan.dynamic || scan.flags.has('x') || scan.flags.has('--exec')) {
    walk.runAfterOptions(invocation, args, scan);
    return;
  }
  walk.runShellString(invocation, args.slice(scan.index), 'watch');
};

/** `script [-c STRING]`: a shell string, or a shell reading its input. */
const script: ProgramHandler = (invocation, walk) => {
  const { args } = invocation;
  const scan = scanOptions(args, 1, { short: 'cEIOBTmo', long: ['--command', '--echo', '--log-in'] });
  const string = scan.values.get('c') ?? scan.values.get('--command');
  if (scan.dynamic) walk.runAfterOptions(invocation, args, scan);
  else if (string !== undefined) walk.runShellString(invocation, [string], 'script -c');
  else walk.runShellInput(invocation, 'script');
};

/** `flock [options] LOCK (-c STRING | COMMAND…)`. */
const flock: ProgramHandler = (invocation, walk) => {
  const { args } = invocation;
  const scan = scanOptions(args, 1, {
    short: 'wEc',
    long: ['--timeout', '--wait', '--conflict-exit-code', '--command'],
  });
  const string = scan.values.get('c') ?? scan.values.get('--command');
  if (scan.dynamic) {
    walk.runAfterOptions(invocation, args, scan);
    return;
  }
  if (string !== undefined) {
    walk.runShellString(invocation, [string], 'flock -c');
    return;
  }
  scan.index++; // the lock file or descriptor
  const after = args[scan.index];
  if (after?.isStatic && (after.value === '-c' || after.value === '--command')) {
    walk.runShellString(invocation, args.slice(scan.index + 1, scan.index + 2), 'flock -c');
    return;
  }
  walk.runAfterOptions(invocation, args, scan);
};

/** A wrapper from the `COMMAND_RUNNERS` table: finds what it runs the way its table entry says. */
export function runCommandRunner(invocation: Invocation, walk: Walk, spec: CommandRunner): void {
  const { finding, args } = invocation;
  const stringOptions = spec.commandStringOptions ?? [];
  const programOptions = spec.programOptions ?? [];
  let start = 1;
  if (spec.after !== undefined) {
    const at = args.findIndex((a, i) => i > 0 && a.isStatic && a.value === spec.after);
    if (at < 0) return; // not running a command
    start = at + 1;
  }
  for (let i = start; i < args.length; i++) {
    const word = args[i]!;
    if (!word.isStatic) {
      finding.issues.push({
        rule: 'policy:dynamic-name',
        message: `"${word.text}" is only known at run time, so "${finding.name}" could run any program`,
      });
      return;
    }
    const v = word.value;
    const eq = v.startsWith('--') ? v.indexOf('=') : -1;
    const option = eq > 0 ? v.slice(0, eq) : v;
    const value = (): Arg | undefined => (eq > 0 ? syntheticArg(v.slice(eq + 1)) : args[i + 1]);
    if (stringOptions.includes(option)) {
      const string = value();
      if (string !== undefined) runnerString(invocation, walk, string, `${finding.name} ${option}`, spec);
      if (eq < 0) i++;
      continue;
    }
    if (programOptions.includes(option)) {
      const program = value();
      if (program !== undefined) walk.runCommand(invocation, [program], undefined, false);
      if (eq < 0) i++;
      continue;
    }
    const address = spec.addressPrefixes?.exec(v);
    if (address) {
      walk.runShellString(
        invocation,
        [syntheticArg(address[1]!)],
        `${finding.name} ${v.slice(0, v.indexOf(':'))}`,
      );
      continue;
    }
    if (!spec.everyWord || v.startsWith('-') || v.startsWith('+')) continue;
    walk.speculatively(() => {
      walk.invokeInner(invocation, args.slice(i), {
        offsetInParent: i,
        via: finding.name,
        openEnded: finding.openEnded,
      });
      if (spec.shellStrings && /\s/.test(v)) walk.runScript(v, invocation, `in a ${finding.name} string`);
    });
  }
  if (finding.name === 'parallel' && !args.slice(1).some((a) => !a.value.startsWith('-')))
    walk.runShellInput(invocation, 'parallel');
}

/** The value of a runner's command-string option: a shell string, a gdb `!cmd`, or Tcl `spawn cmd`. */
function runnerString(
  invocation: Invocation,
  walk: Walk,
  string: Arg,
  what: string,
  spec: CommandRunner,
): void {
  if (!string.isStatic) {
    invocation.finding.issues.push(dynamicScriptIssue(what, 'its command string is only known at run time'));
    return;
  }
  if (spec.tcl) {
    // Tcl is not shell, but its commands that start programs take the program and its words.
    for (const m of string.value.matchAll(/(?:^|[\s;[{])(?:spawn|exec|system)\s+([^;\n\]}]*)/g)) {
      walk.runScript(m[1]!.replace(/^-\S*\s+/, ''), invocation, `in a ${what} script`);
    }
    return;
  }
  if (spec.valuePrefixes !== undefined) {
    for (const prefix of spec.valuePrefixes) {
      const m = prefix.exec(string.value);
      if (m) {
        walk.runShellString(invocation, [syntheticArg(string.value.slice(m[0].length))], what);
        return;
      }
    }
    return;
  }
  walk.runShellString(invocation, [string], what);
}

/** `at`, `batch`, `crontab` (the `SCHEDULERS`): commands to run later, read from input or a file. */
export const runScheduler: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const rest = args.slice(1);
  if (finding.name === 'crontab') {
    if (rest.some((a) => a.isStatic && /^-[a-zA-Z]*[lr]/.test(a.value)) && !rest.some((a) => !a.isStatic))
      return;
    finding.issues.push(dynamicScriptIssue('crontab', 'it installs commands to run later'));
    return;
  }
  if (rest.some((a) => a.isStatic && /^-[a-zA-Z]*[lcrd]$/.test(a.value))) return; // list, show, remove jobs
  if (rest.some((a) => !a.isStatic || a.value.startsWith('-f'))) {
    finding.issues.push(dynamicScriptIssue(finding.name, 'it runs commands from a file later'));
    return;
  }
  const stdin = resolveStdin(stdinOf(invocation.redirects, invocation.scope.stdin));
  if (stdin.kind === 'literal') {
    finding.transparent = false;
    walk.runFedScript(stdin.text, invocation, finding.name);
    return;
  }
  finding.issues.push(dynamicScriptIssue(finding.name, 'it runs commands read from its input later'));
};

/** The wrappers, by program name. */
export const WRAPPER_HANDLERS: ReadonlyMap<string, ProgramHandler> = new Map<string, ProgramHandler>([
  ['env', env],
  ['command', command],
  ['builtin', afterOptions()],
  ['exec', exec],
  ['nice', afterOptions({ short: 'n', long: ['--adjustment'] })],
  ['nohup', afterOptions()],
  ['setsid', afterOptions()],
  ['stdbuf', afterOptions({ short: 'ioe', long: ['--input', '--output', '--error'] })],
  ['time', afterOptions({ short: 'fo', long: ['--format', '--output'] })],
  ['timeout', timeout],
  ['ionice', ionice],
  ['taskset', taskset],
  ['chroot', chroot],
  ['jobs', jobs],
  ['busybox', busybox],
  ['xargs', xargs],
  ['sudo', sudo],
  ['doas', doas],
  ['su', su],
  ['runuser', su],
  ['watch', watch],
  ['script', script],
  ['flock', flock],
]);
