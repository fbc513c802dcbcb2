/**
 * The one decision "is the terminal's foreground program blocked reading the terminal?", from what the
 * kernel says about the processes of the terminal's foreground process group. Every driver gathers the
 * same raw facts — the local driver through its process facts (Linux's `/proc`, or the portable `ps` and
 * `lsof`), a driver over a channel with the host probe script (`@conch/core/host`) — and calls
 * {@link decideInputWait}, so the rule cannot drift between hosts.
 *
 * - `blocked_read`: a member sleeps in a read wait of a terminal (`n_tty_read`, `tty_read`, the BSDs' and
 *   macOS's `ttyin`, or `wait_woken`, where newer Linux kernels park terminal reads) AND its current system
 *   call is a read(2) of this terminal. When the system call cannot be read (`ps`, or a process of another
 *   user), the wait channel alone decides — except `wait_woken`, which is also where socket reads sleep: a
 *   member that sleeps there with a socket open is no evidence either way.
 * - `polling`: a member sleeps in poll/select/epoll (`select`, `poll`, `kqread` on the BSDs) with the
 *   terminal among its open fds.
 * - `unknown`: no evidence either way — the foreground group cannot be read, or a sleeping member's wait
 *   channel is hidden (unreadable, or `0` while it sleeps: a kernel that hides wchan) or ambiguous.
 * - `no` otherwise (running, stopped or sleeping elsewhere).
 *
 * An fd is "this terminal" when it links to the terminal's device path (`/dev/pts/N`), or when it links to
 * `/dev/tty` and the member's controlling terminal (its device number, `tty_nr`, or its device path) is
 * this terminal: `/dev/tty` is whatever the opener's controlling terminal is, and password prompts
 * (`getpass`, `sudo`, `ssh`, `git`) read it rather than stdin.
 */

import type { InputWaitEvidence } from '../driver.js';

/** What the kernel says about one process of the foreground group. */
export interface ProcSample {
  pid: number;
  /** Its state letter (`R`, `S`, `D`, `T`, `Z`…). */
  state: string;
  /**
   * The device number of its controlling terminal (Linux `tty_nr`, stat field 7; 0 for none); undefined
   * when unknown. What its `/dev/tty` fds refer to.
   */
  ttyNr: number | undefined;
  /** Its controlling terminal's device path (`/dev/pts/N`), when known: what `ps` gives instead of `tty_nr`. */
  tty?: string | undefined;
  /** Its wait channel (Linux's per-process `wchan`, `ps -o wchan`); undefined when it cannot be read. */
  wchan: string | undefined;
  /** Its current system call as Linux's per-process `syscall` file writes it (`0 0x3 …`, `running`); undefined when unknown. */
  syscall: string | undefined;
  /** The link targets of its open fds that are terminals (`/dev/pts/N`, `/dev/tty…`), by fd number. */
  terminalFds: ReadonlyMap<number, string>;
  /** Whether it has a socket open; undefined when unknown. */
  sockets?: boolean | undefined;
}

/** Everything {@link decideInputWait} needs. */
export interface InputWaitFacts {
  /** The terminal's device path (`/dev/pts/N`); undefined when unknown. */
  terminal: string | undefined;
  /**
   * The terminal's device number as Linux's stat field 7 (`tty_nr`) of the terminal's session leader
   * gives it; undefined when unknown (then a `/dev/tty` fd is never taken for this terminal).
   */
  terminalDevice: number | undefined;
  /** The machine, as `uname -m` or Node's `process.arch` says (`x86_64`/`x64`, `aarch64`/`arm64`…). */
  arch: string | undefined;
  /** The foreground group's live members; undefined when the foreground group cannot be read. */
  members: readonly ProcSample[] | undefined;
}

/** Wait channels a process sleeps in while it waits in read(2) of a terminal (Linux; `ttyin`: BSDs, macOS). */
export const READ_WAIT_CHANNELS: ReadonlySet<string> = new Set([
  'wait_woken',
  'n_tty_read',
  'tty_read',
  'ttyin',
]);

/** The read wait channel that socket reads share (Linux): without the system call, not evidence alone. */
const SHARED_READ_WAIT_CHANNEL = 'wait_woken';

/** Wait channels a process sleeps in while it polls or selects (Linux; `select`, `poll`, `kqread`: BSDs, macOS). */
export const POLL_WAIT_CHANNEL =
  /^(poll_schedule_timeout|do_select|do_sys_poll|ep_poll|core_sys_select|do_epoll_wait|select$|poll$|kqread$)/;

/** The number of the read(2) system call per machine (both spellings of each). */
const READ_SYSCALL: Readonly<Record<string, number>> = {
  x64: 0,
  x86_64: 0,
  arm64: 63,
  aarch64: 63,
  riscv64: 63,
};

/** The read(2) syscall number on `arch`, or undefined for a machine this table does not know. */
export function readSyscallNumber(arch: string | undefined): number | undefined {
  return arch === undefined ? undefined : READ_SYSCALL[arch.trim()];
}

/** The device path of a process's controlling terminal, whichever terminal that is. */
const CONTROLLING_TERMINAL = '/dev/tty';

/** Whether `sample`'s fd linking to `target` is the terminal of `facts` (see the module doc). */
function isTerminalFd(sample: ProcSample, target: string | undefined, facts: InputWaitFacts): boolean {
  if (target === undefined) return false;
  if (facts.terminal !== undefined && target === facts.terminal) return true;
  if (target !== CONTROLLING_TERMINAL) return false;
  const sameDevice =
    facts.terminalDevice !== undefined && facts.terminalDevice > 0 && sample.ttyNr === facts.terminalDevice;
  const samePath = facts.terminal !== undefined && sample.tty === facts.terminal;
  return sameDevice || samePath;
}

/** Whether the system call of `sample` can tell which fd it reads. */
function syscallKnown(sample: ProcSample, facts: InputWaitFacts, read: number | undefined): boolean {
  return read !== undefined && facts.terminal !== undefined && sample.syscall !== undefined;
}

/** Whether `sample` is inside a read(2) of the terminal of `facts` (true when the syscall cannot tell). */
function readsTerminal(sample: ProcSample, facts: InputWaitFacts, read: number | undefined): boolean {
  if (!syscallKnown(sample, facts, read)) return true;
  if (sample.syscall === undefined) return true;
  const fields = sample.syscall.trim().split(/\s+/);
  if (fields[0] === 'running' || fields.length < 2) return true;
  if (Number(fields[0]) !== read) return false;
  return isTerminalFd(sample, sample.terminalFds.get(Number.parseInt(fields[1]!, 16)), facts);
}

/** The input-wait evidence that `facts` give (see the module doc). */
export function decideInputWait(facts: InputWaitFacts): InputWaitEvidence {
  if (facts.members === undefined) return 'unknown';
  const read = readSyscallNumber(facts.arch);
  let polling = false;
  let blind = false;
  for (const sample of facts.members) {
    if (sample.state === 'Z' || sample.state === 'X' || sample.state === 'T' || sample.state === 't')
      continue;
    const wchan = sample.wchan?.trim();
    if (wchan === undefined || ((wchan === '' || wchan === '0' || wchan === '-') && sample.state !== 'R')) {
      blind = true;
      continue;
    }
    if (READ_WAIT_CHANNELS.has(wchan)) {
      // A socket read sleeps in the same place: without the system call, no evidence either way.
      if (
        wchan === SHARED_READ_WAIT_CHANNEL &&
        sample.sockets === true &&
        !syscallKnown(sample, facts, read)
      ) {
        blind = true;
        continue;
      }
      if (readsTerminal(sample, facts, read)) return 'blocked_read';
    }
    if (
      POLL_WAIT_CHANNEL.test(wchan) &&
      [...sample.terminalFds.values()].some((target) => isTerminalFd(sample, target, facts))
    )
      polling = true;
  }
  if (polling) return 'polling';
  return blind ? 'unknown' : 'no';
}
