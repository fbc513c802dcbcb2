import { describe, expect, it } from 'vitest';
import { decideInputWait, type ProcSample } from './input-wait.js';

const TTY = '/dev/pts/7';
/** /dev/pts/7's device number as /proc/PID/stat field 7 (tty_nr) writes it: major 136, minor 7. */
const TTY_NR = (136 << 8) | 7;
const sample = (over: Partial<ProcSample>): ProcSample => ({
  pid: 100,
  state: 'S',
  ttyNr: TTY_NR,
  wchan: 'do_nanosleep',
  syscall: undefined,
  terminalFds: new Map([[0, TTY]]),
  ...over,
});
const decide = (members: ProcSample[] | undefined, arch = 'x64') =>
  decideInputWait({ arch, terminal: TTY, terminalDevice: TTY_NR, members });

describe('decideInputWait', () => {
  it('a read of the terminal is blocked_read; the same wait on a socket (wait_woken) is not', () => {
    expect(decide([sample({ wchan: 'n_tty_read', syscall: '0 0x0 0x1 0x2' })])).toBe('blocked_read');
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x0 0x1 0x2' })])).toBe('blocked_read');
    // read(2) of fd 5, a socket: no terminal read.
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x5 0x1 0x2' })])).toBe('no');
    // aarch64 numbers read(2) 63; both spellings of the machine name work.
    expect(decide([sample({ wchan: 'wait_woken', syscall: '63 0x0 0x1' })], 'aarch64')).toBe('blocked_read');
    expect(decide([sample({ wchan: 'wait_woken', syscall: '63 0x0 0x1' })], 'arm64')).toBe('blocked_read');
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x0 0x1' })], 'aarch64')).toBe('no');
  });

  it('without a readable syscall or a known machine, the wait channel alone decides', () => {
    expect(decide([sample({ wchan: 'wait_woken', syscall: undefined })])).toBe('blocked_read');
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x5' })], 'mips')).toBe('blocked_read');
    expect(decide([sample({ wchan: 'n_tty_read', syscall: 'running' })])).toBe('blocked_read');
  });

  it("a read of /dev/tty is a read of the terminal when the reader's controlling terminal is this one", () => {
    // getpass, sudo, ssh: fd 3 opened on /dev/tty, the process's controlling terminal (tty_nr) is ours.
    const devTty = new Map([
      [0, TTY],
      [3, '/dev/tty'],
    ]);
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x3 0x1', terminalFds: devTty })])).toBe(
      'blocked_read',
    );
    // Another controlling terminal (or none): /dev/tty is not this terminal.
    expect(
      decide([sample({ wchan: 'wait_woken', syscall: '0 0x3 0x1', terminalFds: devTty, ttyNr: TTY_NR + 1 })]),
    ).toBe('no');
    expect(
      decide([sample({ wchan: 'wait_woken', syscall: '0 0x3 0x1', terminalFds: devTty, ttyNr: 0 })]),
    ).toBe('no');
    // The terminal's device number unknown: /dev/tty cannot be matched to it.
    expect(
      decideInputWait({
        arch: 'x64',
        terminal: TTY,
        terminalDevice: undefined,
        members: [sample({ wchan: 'wait_woken', syscall: '0 0x3 0x1', terminalFds: devTty })],
      }),
    ).toBe('no');
    // Polling /dev/tty alone is polling the terminal too.
    expect(decide([sample({ wchan: 'do_sys_poll', terminalFds: new Map([[3, '/dev/tty']]) })])).toBe(
      'polling',
    );
    expect(
      decide([sample({ wchan: 'do_sys_poll', terminalFds: new Map([[3, '/dev/tty']]), ttyNr: 0 })]),
    ).toBe('no');
  });

  it('polling with the terminal among the fds is polling; without it, no', () => {
    expect(decide([sample({ wchan: 'do_sys_poll' })])).toBe('polling');
    expect(decide([sample({ wchan: 'ep_poll', terminalFds: new Map() })])).toBe('no');
  });

  it('a hidden or unreadable wait channel of a sleeping process is unknown; a running one is no', () => {
    expect(decide([sample({ wchan: undefined })])).toBe('unknown');
    expect(decide([sample({ wchan: '0' })])).toBe('unknown');
    expect(decide([sample({ wchan: '0', state: 'R' })])).toBe('no');
    expect(decide([sample({ wchan: 'do_nanosleep' })])).toBe('no');
    // Evidence from another member still counts.
    expect(decide([sample({ wchan: undefined }), sample({ pid: 101, wchan: 'n_tty_read' })])).toBe(
      'blocked_read',
    );
  });

  it('stopped and zombie members are ignored; an unknown foreground group is unknown', () => {
    expect(
      decide([sample({ wchan: 'n_tty_read', state: 'T' }), sample({ wchan: undefined, state: 'Z' })]),
    ).toBe('no');
    expect(decide(undefined)).toBe('unknown');
  });
});

describe('decideInputWait from portable facts (ps, lsof: no system call, no tty_nr)', () => {
  const portable = (over: Partial<ProcSample>): ProcSample =>
    sample({ ttyNr: undefined, tty: TTY, syscall: undefined, ...over });
  const decidePortable = (members: ProcSample[]) =>
    decideInputWait({ arch: 'x64', terminal: TTY, terminalDevice: undefined, members });

  it("a terminal read wait is a blocked read: Linux's, and the BSDs' and macOS's ttyin", () => {
    expect(decidePortable([portable({ wchan: 'n_tty_read' })])).toBe('blocked_read');
    expect(decidePortable([portable({ wchan: 'ttyin' })])).toBe('blocked_read');
    expect(decidePortable([portable({ wchan: 'wait_woken', sockets: false })])).toBe('blocked_read');
  });

  it('wait_woken with a socket open is no evidence either way (a socket read sleeps there too)', () => {
    expect(decidePortable([portable({ wchan: 'wait_woken', sockets: true })])).toBe('unknown');
    // With the system call known, the socket does not matter: the call says which fd it reads.
    expect(decide([sample({ wchan: 'wait_woken', syscall: '0 0x0 0x1 0x2', sockets: true })])).toBe(
      'blocked_read',
    );
  });

  it('a poll with the terminal open is polling, /dev/tty counting when its controlling terminal is this one', () => {
    expect(decidePortable([portable({ wchan: 'select', terminalFds: new Map([[0, TTY]]) })])).toBe('polling');
    expect(decidePortable([portable({ wchan: 'kqread', terminalFds: new Map([[3, '/dev/tty']]) })])).toBe(
      'polling',
    );
    expect(
      decidePortable([
        portable({ wchan: 'select', tty: '/dev/pts/9', terminalFds: new Map([[3, '/dev/tty']]) }),
      ]),
    ).toBe('no');
  });

  it("a sleeper whose wait channel ps shows as '-' is unknown; a running one is not", () => {
    expect(decidePortable([portable({ wchan: '-' })])).toBe('unknown');
    expect(decidePortable([portable({ wchan: '-', state: 'R' })])).toBe('no');
  });
});
