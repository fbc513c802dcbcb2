/**
 * The small POSIX-sh programs a driver runs on a host it reaches through a channel (an SSH connection, a
 * container exec): the start-up wrapper of every terminal (cwd, environment, a start marker carrying the
 * host's PID), the tree killer, the finder of what ended commands left running, the terminal-read probe,
 * the foreground signaller, and the connect-time probe (private directory, login shell, process facts).
 * Each is plain POSIX sh plus `awk`, `grep`, `sed` and the host's process facts; arguments are always
 * single-quoted. {@link ./host-operations.ts} runs them and reads their reports.
 *
 * Every process-facts script takes the host's process facts as its first argument (`proc` reads Linux's
 * `/proc`; `ps` the portable `ps`), as the connect probe found them (`facts=`).
 */

import { shellQuote } from '../shell/shell-integration.js';
import { isValidEnvName } from './environment.js';

/** OSC number of the driver's own start marker (distinct from the core's 6973). */
export const START_MARKER_OSC = 6975;

/** Exit status the start-up wrapper uses when it cannot start the program. */
export const START_FAILED_STATUS = 97;

/** A script literal: raw text, with `@{` standing for `${` (which a template literal cannot hold). */
function sh(strings: TemplateStringsArray): string {
  return String.raw({ raw: strings.raw }).replaceAll('@{', '${');
}

/**
 * The start-up script of a terminal channel, run as `/bin/sh FILE` from the private file `scriptPath`
 * (which it removes first): enter `cwd`, export `env`, print the start marker with
 * `$$` (the PID that `exec` keeps, which sshd made a session and process-group leader), then `exec` the
 * program. Failures print an error marker (`cwd` or `program`) and exit with {@link START_FAILED_STATUS}.
 */
export function startupScript(options: {
  nonce: string;
  /** The private file the script is run from, removed as it starts. */
  scriptPath?: string;
  file: string;
  args: readonly string[];
  cwd: string | undefined;
  env: Readonly<Record<string, string>>;
  /**
   * Sets the terminal's size with `stty` before the program starts, for channels whose terminal starts
   * without one (a container exec's); ignored where `stty` is missing.
   */
  size?: { cols: number; rows: number };
}): string {
  const marker = (kind: string, value: string) =>
    `printf '\\033]${START_MARKER_OSC};%s;%s;%s\\007' ${options.nonce} ${kind} ${value}`;
  const lines: string[] = [];
  // Run from a private file: the file goes first (nothing else may read it later).
  if (options.scriptPath !== undefined) lines.push(`rm -f -- ${shellQuote(options.scriptPath)} 2>/dev/null`);
  if (options.cwd !== undefined) {
    lines.push(
      `cd -- ${shellQuote(options.cwd)} 2>/dev/null || { ${marker('err', 'cwd')}; exit ${START_FAILED_STATUS}; }`,
    );
  }
  lines.push(
    `command -v ${shellQuote(options.file)} >/dev/null 2>&1 || { ${marker('err', 'program')}; exit ${START_FAILED_STATUS}; }`,
  );
  for (const [name, value] of Object.entries(options.env)) {
    if (!isValidEnvName(name)) throw new Error(`invalid environment variable name ${JSON.stringify(name)}`);
    lines.push(`export ${name}=${shellQuote(value)}`);
  }
  if (options.size !== undefined) {
    const { cols, rows } = options.size;
    if (!Number.isInteger(cols) || !Number.isInteger(rows))
      throw new Error('terminal size must be whole numbers');
    lines.push(`stty cols ${cols} rows ${rows} 2>/dev/null`);
  }
  lines.push(marker('pid', '"$$"'));
  lines.push(`exec ${[options.file, ...options.args].map(shellQuote).join(' ')}`);
  return lines.join('\n');
}

/**
 * Connect-time probe: creates the private 0700 directory (`mktemp -d`) and reports it with the user's
 * login shell, bash's path and the host's process facts (`proc` when `/proc` is readable, else `ps`), one
 * `key=value` per line ({@link parseConnectProbe} reads it).
 */
export const CONNECT_PROBE = sh`umask 077
d=$(mktemp -d "@{TMPDIR:-/tmp}/conch-XXXXXXXXXX" 2>/dev/null) || d=
u=$(id -un 2>/dev/null)
s=$(getent passwd "$u" 2>/dev/null | cut -d: -f7)
[ -n "$s" ] || s=$SHELL
b=$(command -v bash 2>/dev/null)
if [ -r /proc/self/stat ]; then f=proc; else f=ps; fi
printf 'dir=%s\nshell=%s\nbash=%s\nuser=%s\nhome=%s\nfacts=%s\n' "$d" "$s" "$b" "$u" "$HOME" "$f"
`;

/**
 * The shell functions the process-facts scripts share, after `facts=…` is set: `facts` falls back to `ps`
 * where `/proc` is not readable; `table` prints one `PID STATE PPID PGID SID TPGID` line per process (SID
 * `-` where `ps` does not show it); `carriers ENTRY…` prints `PID ENTRY` for each process whose initial
 * environment holds one of the `NAME=value` entries (with `ps`, from the BSD `e` flag: only the text after a process's command line
 * counts, so its arguments are never taken for its environment); `alive PID…` prints the live (non-zombie)
 * ones. A script literal (see `sh`): text, never a template with substitutions.
 */
const FACTS_FUNCTIONS = sh`[ "$facts" = proc ] && [ ! -r /proc/self/stat ] && facts=ps
if printf 'a\0' | grep -qzxF a; then zgrep=1; else zgrep=; fi
table() {
  if [ "$facts" = proc ]; then
    cat /proc/[0-9]*/stat | awk '{ p = $1; r = $0; sub(/^.*\) /, "", r); split(r, f, " "); print p, f[1], f[2], f[3], f[4], f[6] }'
  else
    ps -A -o pid= -o stat= -o ppid= -o pgid= -o tpgid= | awk '{ s = substr($2, 1, 1); if (s == "I") s = "S"; if (s == "U") s = "D"; print $1, s, $3, $4, "-", $5 }'
  fi
}
carriers() {
  [ $# -gt 0 ] || return 0
  if [ "$facts" = proc ]; then
    for kv in "$@"; do
      if [ -n "$zgrep" ]; then
        grep -lzxF -- "$kv" /proc/[0-9]*/environ | sed -n "s#^/proc/\([0-9]*\)/environ\$#\1 $kv#p"
      else
        for f in /proc/[0-9]*/environ; do
          tr '\0' '\n' < "$f" | grep -qxF -- "$kv" && { p=@{f#/proc/}; echo "@{p%/environ} $kv"; }
        done
      fi
    done
  else
    { ps axww -o pid= -o command=; echo @@; ps axeww -o pid= -o command=; } | awk -v want="$*" '
      BEGIN { n = split(want, w, " ") }
      $0 == "@@" { env = 1; next }
      { match($0, /^ *[0-9]+ /); p = substr($0, 1, RLENGTH) + 0; rest = substr($0, RLENGTH + 1)
        if (!env) { cmd[p] = rest; next }
        if (!(p in cmd) || substr(rest, 1, length(cmd[p])) != cmd[p]) next
        e = " " substr(rest, length(cmd[p]) + 1) " "
        for (i = 1; i <= n; i++) if (index(e, " " w[i] " ")) print p, w[i] }'
  fi
}
alive() {
  [ $# -gt 0 ] || return 0
  if [ "$facts" = proc ]; then
    for p in "$@"; do
      if read -r l < /proc/$p/stat; then
        r=@{l##*\) }
        [ "@{r%% *}" = Z ] || printf '%s ' "$p"
      fi
    done
  else
    ps -p "$(echo "$@" | tr ' ' ,)" -o pid= -o stat= | awk '$2 !~ /^Z/ { printf "%s ", $1 }'
  fi
}
`;

/**
 * The tree killer. Arguments: FACTS (`proc` | `ps`), MODE (`tree` | `job`), SIGNAL (name without SIG),
 * GRACE (tenths of a second), ROOT (pid or empty), then `NAME=VALUE` environment markers.
 *
 * - `tree`: ROOT, every process in ROOT's session or process group, their descendants, and every
 *   process carrying one of the given command ids (and its descendants).
 * - `job`: the terminal's foreground process group when it is not ROOT's own, plus the processes carrying
 *   the command's id and their descendants; ROOT (the session shell) is spared.
 *
 * Sends SIGNAL (and SIGCONT), waits up to GRACE, SIGKILLs what is left (found afresh), waits up to 2 s,
 * and prints `CONCH_KILL already_exited|killed|stop_unconfirmed [survivors…]`. Without `ps` either, it
 * signals ROOT's process group only, and prints `unsupported` for `job` mode.
 */
export const KILL_SCRIPT = `exec 2>/dev/null
facts=$1 mode=$2 sig=$3 ticks=$4 root=$5
shift 5
self=$$
${FACTS_FUNCTIONS}
collect() {
  m=$(carriers "$@" | awk '{ printf "%s ", $1 }')
  table | awk -v mode="$mode" -v root="$root" -v self="$self" -v marked="$m" '
    { st[$1] = $2; pp[$1] = $3; pg[$1] = $4; sd[$1] = $5; tp[$1] = $6 }
    END {
      n = split(marked, mk, " "); for (i = 1; i <= n; i++) if (mk[i] in st) t[mk[i]] = 1
      if (root != "" && (root in st)) {
        if (mode != "tree") { fg = tp[root]; if (fg > 0 && fg != pg[root]) for (p in st) if (pg[p] == fg) t[p] = 1 }
        else t[root] = 1
      }
      if (root != "" && mode == "tree") for (p in st) if (sd[p] == root || pg[p] == root) t[p] = 1
      do { c = 0; for (p in st) if (!(p in t) && (pp[p] in t)) { t[p] = 1; c = 1 } } while (c)
      if (mode != "tree" && root != "") delete t[root]
      for (p in t) if (p != self && pp[p] != self && st[p] != "Z") printf "%s ", p
    }'
}
if sleep 0.01; then step=0.1; else step=1; ticks=$(( (ticks + 9) / 10 )); fi
if [ "$facts" != proc ] && ! command -v ps >/dev/null; then
  # No process facts at all: only the channel's own process group can be reached.
  [ "$mode" = tree ] && [ -n "$root" ] || { echo "CONCH_KILL unsupported"; exit 0; }
  kill -0 -- "-$root" || { echo "CONCH_KILL already_exited"; exit 0; }
  kill -s "$sig" -- "-$root"; kill -s CONT -- "-$root"
  i=0
  while kill -0 -- "-$root" && [ "$i" -lt "$ticks" ]; do sleep $step; i=$((i + 1)); done
  kill -s KILL -- "-$root"
  i=0
  while kill -0 -- "-$root" && [ "$i" -lt 20 ]; do sleep 0.1 || sleep 1; i=$((i + 1)); done
  if kill -0 -- "-$root"; then echo "CONCH_KILL stop_unconfirmed"; else echo "CONCH_KILL killed"; fi
  exit 0
fi
first=$(collect "$@")
if [ -z "$first" ]; then echo "CONCH_KILL already_exited"; exit 0; fi
kill -s "$sig" $first
[ "$sig" = KILL ] || kill -s CONT $first
i=0
left=$(alive $first)
while [ -n "$left" ] && [ "$i" -lt "$ticks" ]; do sleep $step; i=$((i + 1)); left=$(alive $left); done
rest=$(alive $left $(collect "$@"))
if [ -n "$rest" ]; then
  kill -s KILL $rest
  i=0
  while [ -n "$rest" ] && [ "$i" -lt 20 ]; do sleep 0.1 || sleep 1; i=$((i + 1)); rest=$(alive $rest); done
fi
if [ -n "$rest" ]; then echo "CONCH_KILL stop_unconfirmed $rest"; else echo "CONCH_KILL killed"; fi
`;

/**
 * Finds what commands left running. Arguments: FACTS (`proc` | `ps`), ROOT (the terminal's own process,
 * or empty), then `NAME=value` marker entries (`CONCH_COMMAND_ID=<id>`). Prints `forks PID:STATE…` (ROOT's
 * live children with ROOT's command name: its forks that have not executed a program yet) and one line
 * `ENTRY PID:STATE…` for each entry that live (non-zombie) processes carry in their environment (STATE is
 * the process's state letter). {@link parseEscapedReport} reads it.
 */
export const ESCAPED_SCRIPT = `exec 2>/dev/null
facts=$1 root=$2
shift 2
self=$$
${FACTS_FUNCTIONS}
[ "$facts" = proc ] || command -v ps >/dev/null || exit 0
if [ -n "$root" ]; then
  if [ "$facts" = proc ]; then
    cat /proc/[0-9]*/stat | awk -v root="$root" '
      { i = index($0, " ("); match($0, /.*\\) /); c[$1] = substr($0, i + 2, RLENGTH - i - 3)
        split(substr($0, RLENGTH + 1), f, " "); st[$1] = f[1]; pp[$1] = f[2] }
      END { o = "forks"; for (p in st) if (pp[p] == root && c[p] == c[root] && st[p] != "Z") o = o " " p ":" st[p]; print o }'
  else
    ps -A -o pid= -o ppid= -o stat= -o comm= | awk -v root="$root" '
      { p = $1; pp[p] = $2; s = substr($3, 1, 1); if (s == "I") s = "S"; if (s == "U") s = "D"; st[p] = s
        c[p] = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +/, "", c[p]) }
      END { o = "forks"; for (p in st) if (pp[p] == root && c[p] == c[root] && st[p] != "Z") o = o " " p ":" st[p]; print o }'
  fi
fi
# The carriers first, then their states: a process that ended meanwhile is left out.
found=$(carriers "$@")
[ -n "$found" ] || exit 0
{ table; echo @@; echo "$found"; } | awk -v self="$self" '
  $0 == "@@" { c = 1; next }
  !c { st[$1] = $2; next }
  $1 != self && ($1 in st) && st[$1] != "Z" {
    if (!($2 in o)) k[++n] = $2
    o[$2] = o[$2] " " $1 ":" st[$1] }
  END { for (i = 1; i <= n; i++) print k[i] o[k[i]] }'
exit 0
`;

/**
 * The terminal probe: fetches the raw facts about ROOT's terminal foreground group, one per line, for the
 * core's `decideInputWait` to judge and for the typed-input policy to name. Arguments: FACTS, ROOT (the
 * channel's session leader) and SOCKETS (an extended regular expression of the file types `lsof` gives
 * sockets). Prints `facts KIND` (what it used), `arch M`, `tty PATH`, `ttynr DEVICE` (ROOT's controlling
 * terminal's device number, `/proc` only), `fg GROUP ROOTGROUP`, `comm NAME` (the group leader), and per
 * live member `proc PID STATE TTY_NR|- [TTY_PATH]`, `name PID NAME` (its command name, argv[0] and, with
 * `/proc`, its executable's base name), `wchan PID VALUE`, with `/proc` `syscall PID TEXT` (when readable),
 * and `fd PID N TARGET` for its terminal fds and, with `ps`, `sockets PID yes|no` (from `lsof`, where
 * present). {@link parseProbeReport} reads it.
 */
export const PROBE_SCRIPT = sh`exec 2>/dev/null
facts=$1 r=$2 socks=$3
[ "$facts" = proc ] && [ ! -r /proc/self/stat ] && facts=ps
echo "facts $facts"
echo "arch $(uname -m)"
if [ "$facts" = proc ]; then
  read -r l < /proc/$r/stat || exit 0
  set -- @{l##*\) }
  fg=$6 rg=$3
  echo "tty $(readlink /proc/$r/fd/0)"
  echo "ttynr $5"
  echo "fg $fg $rg"
  case $fg in ''|-*|0) exit 0;; esac
  for f in /proc/[0-9]*/stat; do
    read -r l < "$f" || continue
    set -- @{l##*\) }
    [ "$3" = "$fg" ] || continue
    p=@{f#/proc/}; p=@{p%/stat}
    c=@{l#*\(}; c=@{c%\)*}
    if [ "$p" = "$fg" ]; then echo "comm $c"; fi
    echo "proc $p $1 $5"
    echo "name $p $c"
    a=$(tr '\0' '\n' < /proc/$p/cmdline | head -n 1) && [ -n "$a" ] && echo "name $p $a"
    e=$(readlink /proc/$p/exe) && e=@{e% (deleted)} && echo "name $p @{e##*/}"
    w=; if read -r w < /proc/$p/wchan || [ -n "$w" ]; then echo "wchan $p $w"; fi
    y=; if read -r y < /proc/$p/syscall; then echo "syscall $p $y"; fi
    for d in /proc/$p/fd/*; do
      t=$(readlink "$d") || continue
      case $t in /dev/pts/*|/dev/tty*) echo "fd $p @{d##*/} $t";; esac
    done
  done
  exit 0
fi
t=$(ps -p "$r" -o tty=) || exit 0
t=$(echo $t)
case $t in ''|'?'*|-) exit 0;; esac
echo "tty /dev/$t"
rows=$(ps -t "$t" -o pid -o pgid -o tpgid -o stat -o wchan=WCHAN________________________________________________ -o comm | sed 1d)
set -- $(echo "$rows" | awk -v r="$r" '$1 == r { print $3, $2 }')
fg=$1 rg=$2
echo "fg $fg $rg"
case $fg in ''|-*|0) exit 0;; esac
members=$(echo "$rows" | awk -v fg="$fg" -v t="/dev/$t" '$2 == fg {
  s = substr($4, 1, 1); if (s == "I") s = "S"; if (s == "U") s = "D"
  c = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", c); sub(/.*\//, "", c)
  if ($1 == fg) print "comm " c
  print "proc " $1 " " s " - " t; print "name " $1 " " c; print "wchan " $1 " " $5 }')
echo "$members"
for p in $(echo "$members" | awk '$1 == "proc" && $3 != "Z" { print $2 }'); do
  a=$(ps -p "$p" -o args=) && a=@{a%% *} && [ -n "$a" ] && echo "name $p $a"
  command -v lsof >/dev/null || continue
  lsof -w -n -P -a -p "$p" -d 0-1023 -F ftn | awk -v p="$p" -v socks="$socks" '
    /^f/ { fd = substr($0, 2); seen = 1 }
    /^t/ { if (socks != "" && substr($0, 2) ~ socks) s = 1 }
    /^n\/dev\/(pts\/|tty)/ { print "fd " p " " fd " " substr($0, 2) }
    END { if (seen) print "sockets " p " " (s ? "yes" : "no") }'
done
`;

/**
 * Signals the foreground process group of ROOT's terminal. Arguments: FACTS, SIGNAL (without SIG) and
 * ROOT. Exits non-zero when the group cannot be found.
 */
export const SIGNAL_SCRIPT = sh`exec 2>/dev/null
facts=$1 sig=$2 root=$3
if [ "$facts" = proc ] && [ -r /proc/self/stat ]; then
  read -r l < /proc/$root/stat || exit 1
  set -- @{l##*\) }
  g=$6
else
  g=$(ps -o tpgid= -p "$root") || exit 1
  g=$(echo $g)
fi
case $g in ''|-*|0) exit 1;; esac
kill -s "$sig" -- "-$g"
`;

/** Runs `script` with positional arguments through `sh -c` (the login shell only parses this line). */
export function shCommand(script: string, args: readonly string[] = []): string {
  return `exec /bin/sh -c ${shellQuote(script)} conch ${args.map(shellQuote).join(' ')}`.trimEnd();
}
