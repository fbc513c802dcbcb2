import { programBaseName, runsTypedCommands } from '@conch/core';

/**
 * Tables of programs, variables and options the policy knows about. Kept in one place so that
 * `docs/policy.md` can list exactly what is checked.
 */

/** Language interpreters with a REPL: text typed into them cannot be checked as shell commands. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  'python',
  'python2',
  'python3',
  'ipython',
  'node',
  'deno',
  'bun',
  'perl',
  'ruby',
  'irb',
  'php',
  'lua',
  'R',
  'julia',
  'ghci',
  'sqlite3',
  'psql',
  'mysql',
  'gdb',
  'lldb',
  'tclsh',
  'wish',
  'expect',
  'erl',
  'iex',
  'scala',
  'clojure',
  'guile',
  'sbcl',
  'ocaml',
]);

/**
 * True when `argv0` (a program name or path, as found in a process's command line; a login shell's
 * leading `-` is ignored) runs commands typed at it: a shell of the one list, or a program that relays typed
 * text to one (`script`, `tmux`, `screen`, `ssh`, `su` …). Text typed into such a foreground program is
 * checked with the policy like `execute`.
 */
export function isShellProgram(argv0: string): boolean {
  return runsTypedCommands(argv0);
}

/**
 * True when `argv0` is a language interpreter or database shell with a REPL (python, node, perl, ruby,
 * psql, …). Text typed into one cannot be checked as shell syntax; a face may refuse it under an allow
 * list.
 */
export function isInterpreterProgram(argv0: string): boolean {
  const base = programBaseName(argv0);
  if (INTERPRETERS.has(base)) return true;
  const m = /^(python|perl|ruby|php|lua|node)[0-9.]*$/.exec(base);
  return m !== null;
}

/**
 * How a program that runs another command (a wrapper) is read. Every field is optional.
 */
export interface CommandRunner {
  /**
   * Options are not modelled: every word that could start the command is checked as one, speculatively (a
   * deny rule or built-in check on any of them denies; under an allow list the wrapper needs an allow rule
   * of its own, and allowing it allows what it runs).
   */
  readonly everyWord?: boolean;
  /**
   * Only words after this subcommand word can start the command (`ip netns exec NS CMD`, `uv run CMD`):
   * words before it are the tool's own and are not checked.
   */
  readonly after?: string;
  /** Those words may also be a command string run by a shell (`tmux new 'rm x'`): checked as one too. */
  readonly shellStrings?: boolean;
  /** Options whose value is a command string run by a shell (`capsh -c`, `ncat --sh-exec`). */
  readonly commandStringOptions?: readonly string[];
  /** Options whose value is a program it runs (`start-stop-daemon -x`, `capsh --shell`). */
  readonly programOptions?: readonly string[];
  /** For `commandStringOptions`: only a value starting with one of these (removed) is a shell command. */
  readonly valuePrefixes?: readonly RegExp[];
  /** Words such as `EXEC:cmd` / `SYSTEM:cmd` (socat): group 1 is a command string. */
  readonly addressPrefixes?: RegExp;
  /** The `commandStringOptions` values are Tcl (expect): its `spawn`/`exec`/`system` commands are checked. */
  readonly tcl?: boolean;
}

const EVERY: CommandRunner = { everyWord: true };
const EVERY_STRING: CommandRunner = { everyWord: true, shellStrings: true };

/**
 * Wrappers without a handler of their own: programs that run a command given to them, with how to find it
 * (one table; each entry has a test). Sources: privilege, namespace, tracing, resource and scheduling tools,
 * terminal multiplexers, project environment runners, and public catalogues of programs that execute
 * commands for others (GTFOBins "shell" and "command" functions).
 */
export const COMMAND_RUNNERS: ReadonlyMap<string, CommandRunner> = new Map<string, CommandRunner>([
  ['strace', EVERY],
  ['ltrace', EVERY],
  ['valgrind', EVERY],
  ['pkexec', EVERY],
  ['sg', EVERY],
  ['unshare', EVERY],
  ['nsenter', EVERY],
  ['chrt', EVERY],
  ['prlimit', EVERY],
  ['numactl', EVERY],
  ['systemd-run', EVERY],
  ['firejail', EVERY],
  ['bwrap', EVERY],
  ['unbuffer', EVERY],
  ['catchsegv', EVERY],
  ['faketime', EVERY],
  ['torsocks', EVERY],
  ['proxychains', EVERY],
  ['proxychains4', EVERY],
  ['xvfb-run', EVERY],
  ['dbus-run-session', EVERY],
  ['cgexec', EVERY],
  ['parallel', EVERY],
  ['nocache', EVERY],
  ['eatmydata', EVERY],
  ['fakeroot', EVERY],
  ['fakechroot', EVERY],
  ['trickle', EVERY],
  ['cpulimit', EVERY],
  ['chpst', EVERY],
  ['runcon', EVERY],
  ['sem', EVERY],
  ['setpriv', EVERY],
  ['dbus-launch', EVERY],
  ['ip', { everyWord: true, after: 'exec' }],
  ['perf', EVERY],
  ['sshpass', EVERY],
  ['ssh-agent', EVERY],
  ['entr', EVERY],
  ['setarch', EVERY],
  ['linux32', EVERY],
  ['linux64', EVERY],
  ['schroot', EVERY],
  ['proot', EVERY],
  ['gosu', EVERY],
  ['su-exec', EVERY],
  ['tini', EVERY],
  ['dumb-init', EVERY],
  ['setuidgid', EVERY],
  ['envuidgid', EVERY],
  ['softlimit', EVERY],
  ['daemonize', EVERY],
  ['rlwrap', EVERY],
  ['torify', EVERY],
  ['aa-exec', EVERY],
  ['flatpak-spawn', EVERY],
  ['distrobox-enter', EVERY],
  ['uv', { everyWord: true, after: 'run' }],
  ['poetry', { everyWord: true, after: 'run' }],
  ['pipenv', { everyWord: true, after: 'run' }],
  ['bundle', { everyWord: true, after: 'exec' }],
  ['direnv', { everyWord: true, after: 'exec' }],
  ['mise', { everyWord: true, after: 'exec' }],
  ['asdf', { everyWord: true, after: 'exec' }],
  ['dotenv', EVERY],
  ['chronic', EVERY],
  ['run-one', EVERY],
  ['tmux', EVERY_STRING],
  ['screen', EVERY_STRING],
  ['byobu', EVERY_STRING],
  ['dtach', EVERY_STRING],
  ['abduco', EVERY_STRING],
  ['xterm', { everyWord: true, shellStrings: true, commandStringOptions: ['-e'] }],
  ['capsh', { everyWord: true, commandStringOptions: ['-c'], programOptions: ['--shell'] }],
  ['start-stop-daemon', { everyWord: true, programOptions: ['-x', '--exec', '-a', '--startas'] }],
  [
    'gdb',
    {
      commandStringOptions: [
        '-ex',
        '--ex',
        '-eval-command',
        '--eval-command',
        '-iex',
        '--iex',
        '-init-eval-command',
        '--init-eval-command',
      ],
      valuePrefixes: [/^\s*!/, /^\s*she(?:l|ll)?\s/, /^\s*(?:pipe|\|)[^|]*\|/],
    },
  ],
  ['expect', { tcl: true, commandStringOptions: ['-c'] }],
  ['socat', { addressPrefixes: /^(?:EXEC|SYSTEM):(.*)$/is }],
  ['nc', { commandStringOptions: ['-e', '-c', '--exec', '--sh-exec'] }],
  ['ncat', { commandStringOptions: ['-e', '-c', '--exec', '--sh-exec'] }],
  ['netcat', { commandStringOptions: ['-e', '-c'] }],
  ['nix-shell', { commandStringOptions: ['--run', '--command'] }],
]);

/** Programs that read commands to run later from a file or their input (`at`, `batch`, `crontab`). */
export const SCHEDULERS: ReadonlySet<string> = new Set(['at', 'batch', 'crontab']);

/**
 * Builtins that evaluate their arguments (or the array subscripts in the names they are given)
 * arithmetically: an argument of theirs whose quoted text holds substitution syntax and that is only known
 * at run time cannot be checked, and is denied under any rule.
 */
export const ARITHMETIC_BUILTINS: ReadonlySet<string> = new Set([
  'let',
  'declare',
  'typeset',
  'local',
  'readonly',
  'export',
  'read',
  'printf',
  'unset',
  'test',
  '[',
  'mapfile',
  'readarray',
  'getopts',
  'wait',
]);

/** Directories whose programs are known by their base name: `/usr/bin/rm` is `rm`, `./rm` is not. */
export const SYSTEM_BIN_DIRS: ReadonlySet<string> = new Set([
  '/bin',
  '/sbin',
  '/usr/bin',
  '/usr/sbin',
  '/usr/local/bin',
  '/usr/local/sbin',
  '/usr/games',
  '/usr/libexec',
  '/opt/homebrew/bin',
  '/opt/homebrew/sbin',
  '/snap/bin',
  '/run/current-system/sw/bin',
]);

/**
 * Variables whose assignment changes what later commands (or the programs they start) mean. Assigning one
 * is denied under any rule. Entries ending in `*` are prefixes.
 */
export const PROTECTED_VARIABLES: readonly string[] = [
  'PATH',
  'LD_*',
  'DYLD_*',
  'BASH_ENV',
  'ENV',
  'IFS',
  'PROMPT_COMMAND',
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'SHELLOPTS',
  'BASHOPTS',
  'GIT_*',
  'BASH_FUNC_*',
  'BASH_LOADABLES_PATH',
  'BASH_COMPAT',
  'HOME',
  'XDG_CONFIG_HOME',
  'PAGER',
  'MANPAGER',
  'SYSTEMD_PAGER',
  'LESSOPEN',
  'LESSCLOSE',
  'EDITOR',
  'VISUAL',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'NODE_OPTIONS',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'FPATH',
  'ZDOTDIR',
  'BASH_CMDS',
  'BASH_ALIASES',
  'histchars',
  'MAIL',
  'MAILPATH',
  'LESS',
  'MORE',
];

const PROTECTED_EXACT = new Set(PROTECTED_VARIABLES.filter((v) => !v.endsWith('*')));
const PROTECTED_PREFIXES = PROTECTED_VARIABLES.filter((v) => v.endsWith('*')).map((v) => v.slice(0, -1));

/** True when assigning the variable `name` is denied under a policy (see {@link PROTECTED_VARIABLES}). */
export function isProtectedVariable(name: string): boolean {
  if (PROTECTED_EXACT.has(name)) return true;
  return PROTECTED_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * Git's built-in commands (git 2.4x `git help -a`, main porcelain and plumbing). A subcommand not in this
 * list is an alias or an external `git-NAME` program, which can run anything; it is denied unless an allow
 * rule names it.
 */
export const GIT_BUILTIN_COMMANDS: ReadonlySet<string> = new Set(
  `add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore
check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit
commit-graph commit-tree config count-objects credential credential-cache credential-store describe diagnose
diff diff-files diff-index diff-pairs diff-tree difftool fast-export fast-import fetch fetch-pack filter-branch
fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsck-objects fsmonitor--daemon gc get-tar-commit-id
grep gui hash-object help hook http-backend index-pack init init-db instaweb interpret-trailers last-modified
log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index
merge-octopus merge-one-file merge-ours merge-recursive merge-resolve merge-subtree merge-tree mergetool mktag
mktree multi-pack-index mv name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed
pull push range-diff read-tree rebase receive-pack reflog refs remote repack replace replay repo request-pull
rerere reset restore rev-list rev-parse revert rm send-email send-pack sh-i18n sh-setup shortlog show
show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref
tag unpack-file unpack-objects update-index update-ref update-server-info upload-archive upload-pack var
verify-commit verify-pack verify-tag version whatchanged worktree write-tree`.split(/\s+/),
);

/** Git global options (before the subcommand) that take the next word as their value. */
export const GIT_GLOBAL_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
  '--list-cmds',
  '--attr-source',
]);

/** Git subcommands whose options can write files or run programs; a non-static argument to them is denied. */
export const GIT_RISKY_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'diff',
  'diff-files',
  'diff-index',
  'diff-tree',
  'log',
  'show',
  'whatchanged',
  'format-patch',
  'range-diff',
  'blame',
  'annotate',
  'cat-file',
  'grep',
  'fetch',
  'pull',
  'clone',
  'push',
  'ls-remote',
  'archive',
  'submodule',
  'rebase',
  'difftool',
  'mergetool',
  'bisect',
  'config',
  'filter-branch',
  'send-email',
]);

/**
 * `find` primaries that run programs or write/delete files. Denied unless an allow rule names them
 * (e.g. `find -exec`); the command after `-exec`/`-execdir`/`-ok`/`-okdir` is also checked.
 */
export const FIND_SENSITIVE_PRIMARIES: ReadonlySet<string> = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
]);

/** `find` primaries that take the next word as a value (so a non-static value there is fine). */
export const FIND_PRIMARIES_WITH_VALUE: ReadonlySet<string> = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-regex',
  '-iregex',
  '-lname',
  '-ilname',
  '-newer',
  '-anewer',
  '-cnewer',
  '-user',
  '-group',
  '-perm',
  '-size',
  '-type',
  '-xtype',
  '-mtime',
  '-mmin',
  '-atime',
  '-amin',
  '-ctime',
  '-cmin',
  '-used',
  '-maxdepth',
  '-mindepth',
  '-printf',
  '-inum',
  '-links',
  '-samefile',
  '-uid',
  '-gid',
  '-fstype',
  '-context',
  '-files0-from',
  '-regextype',
  '-D',
  '-O',
]);
