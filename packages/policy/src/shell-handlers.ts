import type { ProgramHandler } from './handler-api.js';
import { dynamicScriptIssue } from './issues.js';
import { type OptionTable, scanOptions } from './option-scan.js';
import { STDIN_PATHS } from './stdin.js';
import { type Arg, syntheticArg } from './words.js';

/**
 * Handlers of programs that run shell text: the shells (`bash -c`, `sh -s`, a script on its own input),
 * `ssh host COMMAND`, `eval`, `trap`, and `source`/`.` (a file's commands, which cannot be checked).
 */

/** A shell of the one list (`bash`, `sh`, `zsh`, `fish` …): its `-c` string, `-s` input, or script file. */
export const runShell: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  let i = 1;
  let cFlag = false;
  let sFlag = false;
  const extra: Arg[] = []; // fish -C / --init-command strings, run first
  while (i < args.length) {
    const word = args[i]!;
    if (!word.isStatic) {
      finding.transparent = true;
      finding.issues.push(dynamicScriptIssue(finding.name, `"${word.text}" is only known at run time`));
      return;
    }
    const v = word.value;
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (v.startsWith('--')) {
      if (v === '--rcfile' || v === '--init-file') i++;
      else if (v === '--command') cFlag = true;
      else if (v.startsWith('--command=')) {
        walk.runShellString(invocation, [syntheticArg(v.slice('--command='.length))], `${finding.name} -c`);
        return;
      } else if (v === '--init-command') {
        const string = args[i + 1];
        if (string !== undefined) extra.push(string);
        i++;
      } else if (v.startsWith('--init-command=')) extra.push(syntheticArg(v.slice('--init-command='.length)));
      i++;
      continue;
    }
    if ((v.startsWith('-') || v.startsWith('+')) && v.length > 1) {
      let consume = 0;
      for (const ch of v.slice(1)) {
        if (ch === 'c' && v.startsWith('-')) cFlag = true;
        else if (ch === 's') sFlag = true;
        else if (ch === 'o' || ch === 'O') consume++;
        else if (ch === 'C' && finding.name === 'fish') {
          const string = args[i + 1 + consume];
          if (string !== undefined) extra.push(string);
          consume++;
        }
      }
      i += 1 + consume;
      continue;
    }
    break;
  }
  for (const string of extra) walk.runShellString(invocation, [string], `${finding.name} -C`);
  if (cFlag) {
    const string = args[i];
    if (string !== undefined) walk.runShellString(invocation, [string], `${finding.name} -c`);
    else if (finding.openEnded)
      finding.issues.push(dynamicScriptIssue(finding.name, 'the command string comes from its input'));
    return;
  }
  const file = args[i];
  // A script file that is the shell's own input reads it like `bash -s`.
  const fileIsStdin = file !== undefined && STDIN_PATHS.has(file.value);
  if (file !== undefined && !sFlag && !fileIsStdin) return; // runs a script file, like running any program
  if (finding.openEnded) {
    finding.transparent = true;
    finding.issues.push(
      dynamicScriptIssue(finding.name, 'its script or file comes from its input at run time'),
    );
    return;
  }
  walk.runShellInput(invocation, finding.name);
};

/** `ssh [options] HOST [COMMAND…]`: the command is a shell string; `-o` options that run a local command. */
const ssh: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  const table: OptionTable = { short: 'BbcDEeFIiJLlmOoPpQRSWw' };
  let scan = scanOptions(args, 1, table);
  const flagLocalCommands = (values: Arg[] | undefined) => {
    for (const value of values ?? []) {
      const key = /^\s*([A-Za-z]+)/.exec(value.value)?.[1]?.toLowerCase() ?? '';
      if (
        !value.isStatic ||
        ['proxycommand', 'localcommand', 'permitlocalcommand', 'knownhostscommand'].includes(key)
      ) {
        finding.issues.push({
          rule: 'policy:ssh -o',
          message: `ssh option "${value.text}" runs a local command`,
          waiver: { program: 'ssh', words: ['-o'] },
        });
      }
    }
  };
  flagLocalCommands(scan.allValues.get('o'));
  if (scan.dynamic) {
    finding.issues.push(
      dynamicScriptIssue('ssh', `"${args[scan.index]?.text ?? ''}" is only known at run time`),
    );
    return;
  }
  const afterHost = scan.index + 1;
  if (afterHost > args.length) return; // no host: nothing runs
  scan = scanOptions(args, afterHost, table);
  flagLocalCommands(scan.allValues.get('o'));
  if (scan.dynamic) {
    finding.issues.push(
      dynamicScriptIssue('ssh', `"${args[scan.index]?.text ?? ''}" is only known at run time`),
    );
    return;
  }
  const command = args.slice(scan.index);
  if (command.length === 0) {
    if (!scan.flags.has('N') && !finding.openEnded) walk.runShellInput(invocation, 'ssh');
    return;
  }
  walk.runShellString(invocation, command, 'ssh');
  finding.transparent = false; // reaching another machine needs its own allow rule
};

/** `eval WORDS…`: the words joined with spaces run as commands. */
const evalWords: ProgramHandler = (invocation, walk) => {
  const { finding } = invocation;
  const rest = invocation.args.slice(1);
  finding.transparent = true;
  if (rest.length === 0) return;
  if (!rest.every((a) => a.isStatic)) {
    finding.issues.push(dynamicScriptIssue('eval', 'its arguments are only known at run time'));
    return;
  }
  walk.runScript(rest.map((a) => a.value).join(' '), invocation, 'eval');
};

/** `trap ACTION SIGNAL…`: the action runs later; denied under any rule, and checked as commands. */
const trap: ProgramHandler = (invocation, walk) => {
  const rest = invocation.args.slice(1);
  let i = 0;
  while (i < rest.length && rest[i]!.isStatic && /^-[lp]+$/.test(rest[i]!.value)) i++;
  if (rest[i]?.isStatic && rest[i]!.value === '--') i++;
  const action = rest[i];
  if (action === undefined || (action.isStatic && action.value === '-')) return;
  invocation.finding.issues.push({
    rule: 'policy:trap',
    message: '"trap" makes the shell run a command later, when a signal arrives or the shell exits',
  });
  if (action.isStatic && action.value !== '') walk.runScript(action.value, invocation, 'trap');
};

/** `source FILE` / `. FILE`: a file's commands run in this shell. */
const source: ProgramHandler = ({ finding }) => {
  finding.issues.push({
    rule: 'policy:source',
    message: `"${finding.name}" runs a file's commands in this shell, where they cannot be checked and can redefine commands`,
  });
};

/** The programs that run shell text, by name (the shells themselves come from the one list). */
export const SHELL_TEXT_HANDLERS: ReadonlyMap<string, ProgramHandler> = new Map<string, ProgramHandler>([
  ['ssh', ssh],
  ['eval', evalWords],
  ['trap', trap],
  ['source', source],
  ['.', source],
]);
