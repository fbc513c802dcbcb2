/**
 * Shell integration: the init scripts that make a session shell report, through a private escape
 * sequence carrying a per-session random nonce, the start of each command, its exit status and the
 * shell's cwd; and the encoding of a command into the one line conch types (docs/sessions.md).
 *
 * Protocol (all markers are `ESC ] 6973 ; NONCE ; KIND ; … BEL`):
 * - `R;CWD`              the shell finished its init and is at its first prompt
 * - `S;ID`               command ID starts (printed before any of its output)
 * - `E;ID;STATUS;CWD`    command ID ended with STATUS; CWD is the shell's cwd afterwards
 * - `D;ID;STATUS`        after `E;ID`: the exported environment is written to the command's snapshot
 *                        file (STATUS 0), or could not be (another STATUS: the file is not whole)
 * - `P`                  the shell is about to show its prompt (after every command line, a person's
 *                        too, and after Ctrl+C): from the prompt hook, or (sh) from `PS1`
 *
 * The session shell snapshots its exported environment for isolated commands after it reports a
 * command's end, not before: the snapshot (an `export -p` into a file: an open, a write per variable, fd
 * juggling) stays off the path between the command's last byte and its result. Until `D` arrives the
 * snapshot is pending, and an isolated command waits for it (docs/sessions.md).
 *
 * The snapshot goes to one of several files, the session's *snapshot slots* (see {@link snapshotFile}),
 * chosen by conch for each command and never the one isolated commands are given to load: a file is
 * rewritten in place (see {@link ENV_SNAPSHOT_BUILTIN}), and a reader of a file being rewritten in place
 * would see new lines up to some byte and old ones after it.
 *
 * A foreground command is typed as one line, ` __conch_s ID SLOT;eval $'{ TEXT\n}';__conch_e ID`, with every
 * byte outside printable ASCII (and `'`, `\`, `!`) written as `\xHH`, so the terminal's line editor sees
 * neither control characters nor history expansion. `eval` of a brace group lets the live shell's own
 * parser (with the session's aliases and shopts) read the whole input before running any of it: a
 * syntax error or an unterminated quote runs nothing and completes with status 2 instead of leaving
 * the shell at a continuation prompt. Heredocs and multi-line input need no special case. Input too
 * long for a terminal line is written to a private file that the shell sources instead.
 */

import type { ShellKind } from '../driver.js';
import { COMMAND_MARKER } from '../host/markers.js';

/** The OSC number conch's markers use. */
export const MARKER_OSC = 6973;

/** Longest line conch types into a terminal; longer input goes through a private script file. */
export const MAX_TYPED_LINE = 3800;

/**
 * The shell's exported environment, written for isolated commands after every foreground command (after
 * its end marker) to the snapshot slot `$__conch_f` that conch chose for the command. The file is
 * rewritten in place (`1<>`), never truncated or replaced: on ext4, truncating a file that has data and
 * writing it again flushes it to disk on close (`auto_da_alloc`), which cost ~2 ms per command, and so
 * does renaming a new file over it (and `mv` is no builtin). A `return` after the variables ends the
 * sourcing there, so the tail of a longer earlier snapshot is never read. Its status is the `D` marker's:
 * a write that fails half-way (a full disk) leaves a file that is not whole, which conch then never gives
 * to an isolated command. stderr goes first, so that not even a failure to open the file reaches the
 * terminal.
 */
const ENV_SNAPSHOT_BUILTIN = `{ builtin export -p && builtin echo 'return 0'; } 2>/dev/null 1<> "$__conch_f"`;
/** {@link ENV_SNAPSHOT_BUILTIN} for POSIX sh, which has no `builtin`. */
const ENV_SNAPSHOT_POSIX = `{ export -p && echo 'return 0'; } 2>/dev/null 1<> "$__conch_f"`;

/**
 * The snapshot at start-up, into slot 0 (the file conch created empty): emptied again if it could not be
 * written whole, so that an isolated command never loads half of it.
 */
function initialSnapshot(snapshot: string): string {
  return `__conch_f=$__conch_envf; ${snapshot} || : 2>/dev/null >"$__conch_f"`;
}

/**
 * The file of snapshot slot `slot` of a session whose slot 0 is `envFile` (the file conch creates before
 * the shell starts): `envFile` itself, else `envFile.SLOT`. The shell's `__conch_s ID SLOT` names the same
 * file (`$__conch_envf${2:+.$2}`), and slot 0 is typed without a number.
 */
export function snapshotFile(envFile: string, slot: number): string {
  return slot === 0 ? envFile : `${envFile}.${slot}`;
}

/** The `D` marker's printf, after a snapshot: its status is the snapshot's. */
function snapshotMarker(printf: string, esc: string, bel: string): string {
  return `${printf} '${esc}]${MARKER_OSC};%s;D;%s;%s${bel}' "$__conch_n" "$1" "$?"`;
}

/**
 * The session shell reads conch's typed lines without its line editor: readline took each line byte by
 * byte (two syscalls a byte) and echoed it, where the terminal's own line discipline hands bash the whole
 * line in one read. Only on Linux, whose terminal lines hold 4095 bytes (more than {@link MAX_TYPED_LINE});
 * other systems' hold 1024. `set +o emacs +o vi` turns editing off whichever mode the rc chose.
 */
const LINE_EDITING_OFF_BASH = 'case $OSTYPE in linux*) builtin set +o emacs +o vi;; esac';

/**
 * The first process of an isolated command's terminal: a POSIX sh with job control (`set -m`) that runs
 * the command's wrapper as its one foreground job, in a process group of its own, and ends as the job
 * ended (same exit status; killed by the same signal, raised again; a job stopped by Ctrl+Z is continued,
 * since nothing would resume it). A terminal's first process leads its session, and when it exits the
 * kernel hangs up the terminal's foreground process group: were the wrapper that process, a job the
 * command left running (`daemon &`) that had not yet left the group (`setsid`) or set SIGHUP aside
 * (`nohup`) when the wrapper exited would die or live by a race. This leader takes the terminal back
 * before it exits, so the hang-up reaches only itself — as in a terminal where a person's shell ran the
 * command — and what the command left running stays, every time. Its own job messages (`Terminated`) go
 * to /dev/null; the job keeps the terminal as stderr.
 */
export const ISOLATED_JOB_LEADER = [
  'exec 3>&2 2>/dev/null',
  'set -m',
  '"$@" 2>&3 3>&-',
  's=$?',
  'while [ "$s" -ge 148 ] && [ "$s" -le 150 ] && fg >/dev/null; do s=$?; done',
  'case $s in 129|13?|14?|15?) trap - "$((s - 128))"; kill -"$((s - 128))" $$;; esac',
  'exit "$s"',
].join('\n');

/** Guesses the integration flavour from a shell path or name. */
export function shellKindOf(shell: string): ShellKind {
  const base = shell.split('/').pop() ?? shell;
  if (/^(bash|rbash)\b/.test(base)) return 'bash';
  if (/^zsh\b/.test(base)) return 'zsh';
  return 'sh';
}

/** Single-quotes a string for POSIX shells. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Encodes text as the body of a bash/zsh `$'…'` string using only printable ASCII. */
export function ansiCQuote(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let out = "$'";
  for (const b of bytes) {
    if (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c && b !== 0x21) out += String.fromCharCode(b);
    else if (b === 0x0a) out += '\\n';
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return `${out}'`;
}

/** What the session must do to run a command: type `line`; if `script` is set, first write it to a file. */
export interface EncodedCommand {
  /** The line to type (without the final CR). Contains `{{SCRIPT}}` when `script` is set. */
  line: string;
  /** Contents of a private script to write first; its path replaces `{{SCRIPT}}` in `line`. */
  script?: string;
}

/** Placeholder in {@link EncodedCommand.line} for the private script's path. */
export const SCRIPT_PLACEHOLDER = '{{SCRIPT}}';

/** The environment variable that hands an isolated command's wrapper its session's nonce. */
export const ISOLATED_NONCE_ENV = '__CONCH_NONCE';

/**
 * The environment variable that hands an isolated command's shell its wrapper script: the shell's `-c`
 * argument is only `eval "$CONCH_ISOLATED_SCRIPT"`, so neither the wrapper nor the nonce is in argv.
 */
export const ISOLATED_SCRIPT_ENV = 'CONCH_ISOLATED_SCRIPT';

/** The hooks and scripts for one session shell, bound to its nonce. */
export class ShellIntegration {
  readonly kind: ShellKind;
  readonly nonce: string;

  constructor(kind: ShellKind, nonce: string) {
    if (!/^[A-Za-z0-9]{8,64}$/.test(nonce)) throw new Error('nonce must be 8-64 alphanumerics');
    this.kind = kind;
    this.nonce = nonce;
  }

  /**
   * The init script, sourced by the shell at start. It loads the user's rc files (unless `noRc`), then
   * defines the hooks, records the exported environment in `envFile` (snapshot slot 0) for isolated
   * commands, and prints the ready marker.
   */
  initScript(options: { envFile: string; noRc: boolean }): string {
    const n = this.nonce;
    const env = shellQuote(options.envFile);
    const esc = '\\033';
    const bel = '\\007';
    if (this.kind === 'bash') {
      return [
        '# conch shell integration (bash). Generated; private to one session.',
        options.noRc
          ? ''
          : '[ -r /etc/bash.bashrc ] && . /etc/bash.bashrc; [ -r "$HOME/.bashrc" ] && . "$HOME/.bashrc"',
        `__conch_n=${n}; __conch_envf=${env}`,
        `__conch_s() { local __r=$?; __conch_cur="$1"; __conch_f="$__conch_envf\${2:+.$2}"; export ${COMMAND_MARKER}="$1"; __conch_hook; builtin printf '${esc}]${MARKER_OSC};%s;S;%s${bel}' "$__conch_n" "$1"; return $__r; }`,
        `__conch_e() { local __r=$?; [ -n "$__conch_cur" ] || return $__r; __conch_cur=; builtin unset ${COMMAND_MARKER}; builtin printf '${esc}]${MARKER_OSC};%s;E;%s;%s;%s${bel}' "$__conch_n" "$1" "$__r" "$PWD"; ${ENV_SNAPSHOT_BUILTIN}; ${snapshotMarker('builtin printf', esc, bel)}; return $__r; }`,
        // An interrupted command line (Ctrl+C kills the job and bash drops the rest of the line) never
        // reaches the trailing __conch_e: the prompt hook reports its end instead. Then it says the prompt
        // is coming (whoever's command line it was), keeping $? for the prompt.
        `__conch_pc() { __conch_e "$__conch_cur"; local __r=$?; builtin printf '${esc}]${MARKER_OSC};%s;P${bel}' "$__conch_n"; return $__r; }`,
        '__conch_hook() { case " ${PROMPT_COMMAND[*]} " in *" __conch_pc "*) ;; *) PROMPT_COMMAND=(__conch_pc "${PROMPT_COMMAND[@]}");; esac; }',
        '__conch_cur=; __conch_hook',
        'PS2=""',
        LINE_EDITING_OFF_BASH,
        initialSnapshot(ENV_SNAPSHOT_BUILTIN),
        `builtin printf '${esc}]${MARKER_OSC};%s;R;%s${bel}' "$__conch_n" "$PWD"`,
        '',
      ].join('\n');
    }
    if (this.kind === 'zsh') {
      return [
        '# conch shell integration (zsh). Generated; private to one session.',
        // conch pointed ZDOTDIR at this file's directory to get it read; the user's rc lives in $HOME.
        'unset ZDOTDIR',
        options.noRc ? '' : '[ -r "${ZDOTDIR:-$HOME}/.zshrc" ] && . "${ZDOTDIR:-$HOME}/.zshrc"',
        `__conch_n=${n}; __conch_envf=${env}`,
        `__conch_s() { local __r=$?; __conch_cur="$1"; __conch_f="$__conch_envf\${2:+.$2}"; export ${COMMAND_MARKER}="$1"; __conch_hook; builtin printf '${esc}]${MARKER_OSC};%s;S;%s${bel}' "$__conch_n" "$1"; return $__r; }`,
        `__conch_e() { local __r=$?; [ -n "$__conch_cur" ] || return $__r; __conch_cur=; unset ${COMMAND_MARKER}; builtin printf '${esc}]${MARKER_OSC};%s;E;%s;%s;%s${bel}' "$__conch_n" "$1" "$__r" "$PWD"; ${ENV_SNAPSHOT_BUILTIN}; ${snapshotMarker('builtin printf', esc, bel)}; return $__r; }`,
        `__conch_pc() { __conch_e "$__conch_cur"; local __r=$?; builtin printf '${esc}]${MARKER_OSC};%s;P${bel}' "$__conch_n"; return $__r; }`,
        '__conch_hook() { (( ${precmd_functions[(Ie)__conch_pc]} )) || precmd_functions=(__conch_pc $precmd_functions); }',
        '__conch_cur=; __conch_hook',
        'PS2=""; unsetopt PROMPT_SP 2>/dev/null',
        initialSnapshot(ENV_SNAPSHOT_BUILTIN),
        `builtin printf '${esc}]${MARKER_OSC};%s;R;%s${bel}' "$__conch_n" "$PWD"`,
        '',
      ].join('\n');
    }
    return [
      '# conch shell integration (POSIX sh). Generated; private to one session.',
      options.noRc ? '' : '[ -n "$CONCH_USER_ENV" ] && [ -r "$CONCH_USER_ENV" ] && . "$CONCH_USER_ENV"',
      'unset CONCH_USER_ENV',
      `__conch_n=${n}; __conch_envf=${env}`,
      // No prompt hook in POSIX sh: the prompt marker is the start of PS1 (a variable holding it, expanded
      // when the prompt shows; re-added by each command in case PS1 was replaced).
      `__conch_p=$(printf '${esc}]${MARKER_OSC};%s;P${bel}' "$__conch_n")`,
      `__conch_ps1() { case $PS1 in *'\${__conch_p}'*) ;; *) PS1='\${__conch_p}'"$PS1";; esac; }`,
      `__conch_s() { __conch_r=$?; __conch_cur="$1"; __conch_f="$__conch_envf\${2:+.$2}"; export ${COMMAND_MARKER}="$1"; __conch_ps1; printf '${esc}]${MARKER_OSC};%s;S;%s${bel}' "$__conch_n" "$1"; return $__conch_r; }`,
      `__conch_e() { __conch_r=$?; [ -n "$__conch_cur" ] || return $__conch_r; __conch_cur=; unset ${COMMAND_MARKER}; printf '${esc}]${MARKER_OSC};%s;E;%s;%s;%s${bel}' "$__conch_n" "$1" "$__conch_r" "$PWD"; ${ENV_SNAPSHOT_POSIX}; ${snapshotMarker('printf', esc, bel)}; return $__conch_r; }`,
      '__conch_cur=; __conch_ps1',
      'PS2=""',
      initialSnapshot(ENV_SNAPSHOT_POSIX),
      `printf '${esc}]${MARKER_OSC};%s;R;%s${bel}' "$__conch_n" "$PWD"`,
      '',
    ].join('\n');
  }

  /**
   * How to start the shell so that it sources `initPath`: arguments and extra environment.
   * bash: `--rcfile INIT -i`; zsh: `ZDOTDIR` pointing at a directory whose `.zshrc` is the init;
   * sh/dash: `ENV=INIT -i`.
   */
  launch(initPath: string, options: { noRc: boolean }): { args: string[]; env: Record<string, string> } {
    if (this.kind === 'bash') return { args: ['--noprofile', '--rcfile', initPath, '-i'], env: {} };
    if (this.kind === 'zsh') {
      const dir = initPath.slice(0, initPath.lastIndexOf('/'));
      return { args: options.noRc ? ['-f', '-i'] : ['-i'], env: { ZDOTDIR: dir } };
    }
    return { args: ['-i'], env: { ENV: initPath } };
  }

  /** Wraps command text, with an optional `cd` first, as a brace group the shell parses whole. */
  private body(text: string, cwd: string | undefined): string {
    const group = `{ ${text}\n}`;
    return cwd === undefined ? group : `cd -- ${shellQuote(cwd)} && ${group}`;
  }

  /**
   * Encodes a foreground command for typing (see the module doc); its environment snapshot goes to
   * snapshot slot `slot` (see {@link snapshotFile}).
   */
  encodeForeground(commandId: string, text: string, cwd?: string, slot = 0): EncodedCommand {
    const body = this.body(text, cwd);
    const start = ` __conch_s ${commandId}${slot === 0 ? '' : ` ${slot}`};`;
    if (this.kind !== 'sh') {
      const line = `${start}eval ${ansiCQuote(body)};__conch_e ${commandId}`;
      if (line.length <= MAX_TYPED_LINE) return { line };
    }
    // zsh sets `$0` to a file it sources: it reads the script into an eval instead, as the short form does.
    const run = this.kind === 'zsh' ? `eval "$(<${SCRIPT_PLACEHOLDER})"` : `. ${SCRIPT_PLACEHOLDER}`;
    return {
      line: `${start}${run};__conch_e ${commandId}`,
      script: `${body}\n`,
    };
  }

  /**
   * The program and arguments that run an isolated command: a small POSIX-sh wrapper that loads the
   * session's exported environment, enters `cwd`, runs the text, and prints the end marker itself, so
   * the command's last output never races the PTY's exit; run by {@link ISOLATED_JOB_LEADER} as its
   * foreground job. The wrapper and the nonce travel in the environment (read and unset first), never in
   * argv, which `ps` shows to every user: argv holds only the leader, `eval "$CONCH_ISOLATED_SCRIPT"`,
   * `$0`, the env file's path, the cwd, the command text and its id.
   *
   * The command sees the shell's parameters as it would typed into the session: `$0` is `shell` as the
   * session's shell was started (every driver starts it with that string as its argv[0], so it is what
   * `echo $0` prints there: `bash`, `/bin/bash`, `/bin/sh`…), and no positional parameters (the
   * wrapper's own are cleared before the text runs).
   */
  isolatedLaunch(options: {
    commandId: string;
    text: string;
    cwd: string | undefined;
    envFile: string | undefined;
    shell: string;
  }): { file: string; args: string[]; env: Record<string, string> } {
    const wrapper = [
      `unset ${ISOLATED_SCRIPT_ENV}`,
      `__conch_n="$${ISOLATED_NONCE_ENV}"; unset ${ISOLATED_NONCE_ENV}`,
      'if [ -n "$1" ] && [ -r "$1" ]; then . "$1" 2>/dev/null; fi',
      `export ${COMMAND_MARKER}="$4"`,
      'if [ -n "$2" ]; then cd -- "$2" || exit 1; fi',
      `printf '\\033]${MARKER_OSC};%s;S;%s\\007' "$__conch_n" "$4"`,
      '__conch_i="$4"; __conch_c="$3"; set --',
      'eval "$__conch_c"',
      '__conch_r=$?',
      `printf '\\033]${MARKER_OSC};%s;E;%s;%s;%s\\007' "$__conch_n" "$__conch_i" "$__conch_r" "$PWD"`,
      'exit $__conch_r',
    ].join('\n');
    const file = this.kind === 'sh' ? '/bin/sh' : options.shell;
    const trampoline = `eval "$${ISOLATED_SCRIPT_ENV}"`;
    const args = this.kind === 'bash' ? ['--norc', '--noprofile', '-c', trampoline] : ['-c', trampoline];
    return {
      file: '/bin/sh',
      args: [
        '-c',
        ISOLATED_JOB_LEADER,
        'sh',
        file,
        ...args,
        options.shell,
        options.envFile ?? '',
        options.cwd ?? '',
        `{ ${options.text}\n}`,
        options.commandId,
      ],
      env: { [ISOLATED_NONCE_ENV]: this.nonce, [ISOLATED_SCRIPT_ENV]: wrapper },
    };
  }
}
