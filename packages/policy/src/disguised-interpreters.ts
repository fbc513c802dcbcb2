import type { ProgramHandler } from './handler-api.js';
import { unverifiableArgumentIssue } from './issues.js';
import {
  FIND_PRIMARIES_WITH_VALUE,
  FIND_SENSITIVE_PRIMARIES,
  GIT_BUILTIN_COMMANDS,
  GIT_GLOBAL_OPTIONS_WITH_VALUE,
  GIT_RISKY_SUBCOMMANDS,
} from './programs.js';
import { type Arg, syntheticArg } from './words.js';

/**
 * Handlers of programs that are interpreters in disguise: options of `git`, `find`, `tar`, `rsync`, `man`,
 * `scp`/`sftp` and `zip` that run other programs (or write files) are issues an allow rule naming the
 * option waives; `find -exec` also runs its command, checked as one.
 */

/** `git`: `-c`, `--config-env`, pagers, aliases, external programs and commands its subcommands run. */
const git: ProgramHandler = ({ finding, args }) => {
  const sensitive = (word: string, message: string) =>
    finding.issues.push({ rule: `policy:git ${word}`, message, waiver: { program: 'git', words: [word] } });
  let i = 1;
  let sub: string | undefined;
  for (; i < args.length; i++) {
    const word = args[i]!;
    if (!word.isStatic) {
      finding.issues.push(unverifiableArgumentIssue('git', word));
      return;
    }
    const v = word.value;
    if (v === '-c' || (v.startsWith('-c') && !v.startsWith('--'))) {
      sensitive('-c', `"git -c" sets configuration such as aliases, pagers and hooks that run programs`);
      if (v === '-c') i++;
    } else if (v === '--config-env' || v.startsWith('--config-env=')) {
      sensitive('--config-env', '"git --config-env" sets configuration that can run programs');
      if (v === '--config-env') i++;
    } else if (v === '-p' || v === '--paginate') {
      sensitive(v, `"git ${v}" runs the configured pager, which can be any program`);
    } else if (v === '--exec-path' || v.startsWith('--exec-path=')) {
      sensitive('--exec-path', '"git --exec-path" chooses where git finds the programs it runs');
    } else if (GIT_GLOBAL_OPTIONS_WITH_VALUE.has(v)) {
      i++;
    } else if (v.startsWith('-')) {
      // other global options, or --opt=value
    } else {
      sub = v;
      break;
    }
  }
  if (sub === undefined) {
    if (finding.openEnded)
      finding.issues.push(unverifiableArgumentIssue('git', syntheticArg('(arguments from input)', false)));
    return;
  }
  if (!GIT_BUILTIN_COMMANDS.has(sub)) {
    finding.issues.push({
      rule: 'policy:git alias',
      message: `"git ${sub}" is not a built-in git command: an alias or external git-${sub} program can run anything`,
      waiver: { program: 'git', words: [sub] },
    });
  }
  const rest = args.slice(i + 1);
  const positional = rest.filter((a) => a.isStatic && !a.value.startsWith('-'));
  for (const word of rest) {
    if (!word.isStatic) {
      if (GIT_RISKY_SUBCOMMANDS.has(sub)) finding.issues.push(unverifiableArgumentIssue(`git ${sub}`, word));
      continue;
    }
    const v = word.value;
    const opt = v.includes('=') ? v.slice(0, v.indexOf('=')) : v;
    if (opt === '--output') sensitive('--output', `"git ${sub} --output" writes to a file`);
    else if (opt === '--ext-diff')
      sensitive('--ext-diff', `"git ${sub} --ext-diff" runs an external diff program`);
    else if (opt === '--textconv')
      sensitive('--textconv', `"git ${sub} --textconv" runs a conversion program`);
    else if (opt === '--upload-pack' || opt === '--receive-pack' || opt === '--exec') {
      sensitive(opt, `"git ${sub} ${opt}" runs a program`);
    } else if (sub === 'clone' && v === '-u') sensitive('--upload-pack', '"git clone -u" runs a program');
    else if (sub === 'rebase' && (v === '-x' || v.startsWith('-x')))
      sensitive('--exec', '"git rebase -x" runs a command');
    else if (sub === 'difftool' && (v === '-x' || opt === '--extcmd'))
      sensitive('--extcmd', '"git difftool -x" runs a command');
    else if (sub === 'grep' && (v === '-O' || opt === '--open-files-in-pager')) {
      sensitive('--open-files-in-pager', '"git grep -O" runs a pager program');
    }
  }
  const first = positional[0]?.value;
  if (sub === 'submodule' && first === 'foreach')
    sensitive('foreach', '"git submodule foreach" runs a command');
  if (sub === 'bisect' && first === 'run') sensitive('run', '"git bisect run" runs a command');
  if (sub === 'filter-branch') sensitive('filter-branch', '"git filter-branch" runs filter commands');
  if (sub === 'config' && isGitConfigWrite(rest)) {
    sensitive('config', '"git config" that sets a value can define aliases, pagers and hooks');
  }
};

const GIT_CONFIG_WRITES: ReadonlySet<string> = new Set([
  'set',
  'unset',
  'edit',
  'rename-section',
  'remove-section',
  '--add',
  '--replace-all',
  '--unset',
  '--unset-all',
  '--edit',
  '-e',
  '--rename-section',
  '--remove-section',
]);
const GIT_CONFIG_READS: ReadonlySet<string> = new Set([
  'get',
  'list',
  '-l',
  '--list',
  '--get',
  '--get-all',
  '--get-regexp',
  '--get-urlmatch',
]);
const GIT_CONFIG_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set([
  '--file',
  '-f',
  '--blob',
  '--type',
  '--default',
  '--comment',
  '--value',
]);

/** True when the words after `git config` set a value (or could). */
function isGitConfigWrite(rest: readonly Arg[]): boolean {
  let positional = 0;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.isStatic) return true;
    if (GIT_CONFIG_WRITES.has(word.value)) return true;
    if (GIT_CONFIG_READS.has(word.value)) return false;
    if (GIT_CONFIG_OPTIONS_WITH_VALUE.has(word.value)) {
      i++;
      continue;
    }
    if (!word.value.startsWith('-')) positional++;
  }
  return positional >= 2;
}

/** `find`: actions that run commands, delete or write files; `-exec … ;`/`+` runs its command. */
const find: ProgramHandler = (invocation, walk) => {
  const { finding, args } = invocation;
  let expectValue = false;
  for (let i = 1; i < args.length; i++) {
    const word = args[i]!;
    if (!word.isStatic) {
      if (!expectValue) finding.issues.push(unverifiableArgumentIssue('find', word));
      expectValue = false;
      continue;
    }
    const v = word.value;
    if (expectValue) {
      expectValue = false;
      continue;
    }
    if (FIND_SENSITIVE_PRIMARIES.has(v)) {
      finding.issues.push({
        rule: `policy:find ${v}`,
        message:
          v === '-delete'
            ? '"find -delete" deletes files'
            : v.startsWith('-fprint') || v === '-fls'
              ? `"find ${v}" writes to a file`
              : `"find ${v}" runs a command for each file`,
        waiver: { program: 'find', words: [v] },
      });
      if (v.startsWith('-exec') || v.startsWith('-ok')) {
        let j = i + 1;
        const command: Arg[] = [];
        let plus = false;
        for (; j < args.length; j++) {
          const w = args[j]!;
          if (w.isStatic && w.value === ';') break;
          if (w.isStatic && w.value === '+' && command.at(-1)?.value === '{}') {
            plus = true;
            break;
          }
          command.push(w.value.includes('{}') ? { ...w, isStatic: false } : w);
        }
        if (command.length > 0) {
          walk.invokeInner(invocation, command, {
            offsetInParent: undefined,
            via: `find ${v}`,
            openEnded: plus,
          });
        }
        i = j;
      } else if (v === '-fprint' || v === '-fprint0' || v === '-fls') expectValue = true;
      else if (v === '-fprintf') i++; // file, then format
      continue;
    }
    if (FIND_PRIMARIES_WITH_VALUE.has(v) || /^-newer[a-zA-Z]{2}$/.test(v)) expectValue = true;
  }
  if (finding.openEnded)
    finding.issues.push(unverifiableArgumentIssue('find', syntheticArg('(arguments from input)', false)));
};

/**
 * A program whose options in `table` run a program: each is an issue named after the program and the
 * option (`policy:tar --to-command`). An entry without a pattern matches the word, `WORD=…`, and for a
 * two-letter option the option with its value attached.
 */
function optionsThatRunPrograms(table: readonly (readonly [string, RegExp?])[]): ProgramHandler {
  return ({ finding, args }) => {
    const program = finding.name;
    for (const word of args.slice(1)) {
      if (!word.isStatic) continue;
      for (const [option, pattern] of table) {
        const hit = pattern
          ? pattern.test(word.value)
          : word.value === option ||
            word.value.startsWith(`${option}=`) ||
            (option.length === 2 && word.value.startsWith(option));
        if (hit) {
          finding.issues.push({
            rule: `policy:${program} ${option}`,
            message: `"${program} ${option}" runs a program`,
            waiver: { program, words: [option] },
          });
        }
      }
    }
  };
}

const remoteCopy = optionsThatRunPrograms([
  ['-S'],
  [
    '-o',
    /^-o\s*(proxycommand|localcommand|knownhostscommand)|^(proxycommand|localcommand|knownhostscommand)/i,
  ],
]);

/** The interpreters in disguise, by program name. */
export const DISGUISED_INTERPRETER_HANDLERS: ReadonlyMap<string, ProgramHandler> = new Map<
  string,
  ProgramHandler
>([
  ['git', git],
  ['find', find],
  [
    'tar',
    optionsThatRunPrograms([
      ['--to-command'],
      ['--checkpoint-action'],
      ['--use-compress-program'],
      ['--info-script'],
      ['--new-volume-script'],
      ['--rsh-command'],
      ['--rmt-command'],
      ['-I'],
      ['-F'],
    ]),
  ],
  ['rsync', optionsThatRunPrograms([['--rsh'], ['--rsync-path'], ['-e', /^-[a-zA-Z]*e/]])],
  ['man', optionsThatRunPrograms([['--pager'], ['-P'], ['--html'], ['-H'], ['--browser']])],
  ['scp', remoteCopy],
  ['sftp', remoteCopy],
  ['zip', optionsThatRunPrograms([['--unzip-command'], ['-TT']])],
]);
