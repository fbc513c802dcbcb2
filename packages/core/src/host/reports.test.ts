import { describe, expect, it } from 'vitest';
import { decideInputWait } from '../input/input-wait.js';
import { parseConnectProbe, parseEscapedReport, parseKillReport, parseProbeReport } from './reports.js';

const TTY = '/dev/pts/7';
/** /dev/pts/7's device number as /proc/PID/stat field 7 (tty_nr) writes it: major 136, minor 7. */
const TTY_NR = (136 << 8) | 7;

describe('parseProbeReport', () => {
  it('reads the remote probe lines into the same facts', () => {
    const report = parseProbeReport(
      [
        'arch x86_64',
        `tty ${TTY}`,
        `ttynr ${TTY_NR}`,
        'fg 200 100',
        'comm python3',
        `proc 200 S ${TTY_NR}`,
        'wchan 200 wait_woken',
        'syscall 200 0 0x0 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f',
        `fd 200 0 ${TTY}`,
        `fd 200 2 ${TTY}`,
        `proc 201 S ${TTY_NR}`,
      ].join('\n'),
    );
    expect(report.fg).toBe(200);
    expect(report.rootGroup).toBe(100);
    expect(report.comm).toBe('python3');
    expect(report.facts.terminalDevice).toBe(TTY_NR);
    expect(report.facts.members?.map((m) => m.pid)).toEqual([200, 201]);
    expect(report.facts.members?.map((m) => m.ttyNr)).toEqual([TTY_NR, TTY_NR]);
    expect(report.facts.members?.[1]?.wchan).toBeUndefined();
    expect(decideInputWait(report.facts)).toBe('blocked_read');
  });

  it('reads a member blocked on /dev/tty (getpass) as a terminal read', () => {
    const report = parseProbeReport(
      [
        'arch x86_64',
        `tty ${TTY}`,
        `ttynr ${TTY_NR}`,
        'fg 300 100',
        'comm python3',
        `proc 300 S ${TTY_NR}`,
        'wchan 300 wait_woken',
        'syscall 300 0 0x3 0x5581 0x2000 0x0 0x0 0x0 0x7ffd 0x7f',
        `fd 300 0 ${TTY}`,
        'fd 300 3 /dev/tty',
      ].join('\n'),
    );
    expect(decideInputWait(report.facts)).toBe('blocked_read');
  });

  it('no foreground group (no /proc, or no fg line) is unknown', () => {
    expect(decideInputWait(parseProbeReport('arch x86_64\n').facts)).toBe('unknown');
    expect(decideInputWait(parseProbeReport(`arch x86_64\ntty ${TTY}\nfg -1 100\n`).facts)).toBe('unknown');
  });
});

describe('parseProbeReport names', () => {
  it("names every live member of the foreground group, the leader first, each name once, and the host's facts", () => {
    const report = parseProbeReport(
      [
        'facts proc',
        'arch x86_64',
        'fg 300 100',
        'comm notashell',
        'proc 299 S',
        'name 299 sleep',
        'proc 300 S',
        'name 300 bash',
        'name 300 notashell',
        'name 300 bash',
        'proc 301 Z',
        'name 301 gone',
      ].join('\n'),
    );
    expect(report.factsKind).toBe('proc');
    expect(report.names).toEqual(['bash', 'notashell', 'sleep']);
    expect(parseProbeReport('facts ps\narch arm64\n')).toMatchObject({ factsKind: 'ps', names: undefined });
  });
});

describe('parseKillReport', () => {
  it('reads the result line, survivors included, and treats a missing line as unconfirmed', () => {
    expect(parseKillReport('noise\nCONCH_KILL killed\n')).toEqual({ result: 'killed', survivors: [] });
    expect(parseKillReport('CONCH_KILL already_exited')).toEqual({ result: 'already_exited', survivors: [] });
    expect(parseKillReport('CONCH_KILL stop_unconfirmed 12 x 13 ')).toEqual({
      result: 'stop_unconfirmed',
      survivors: [12, 13],
    });
    expect(parseKillReport('CONCH_KILL unsupported')).toBe('unsupported');
    expect(parseKillReport('')).toEqual({ result: 'stop_unconfirmed', survivors: [] });
  });
});

describe('parseEscapedReport', () => {
  it("reports by id; the terminal's own process, other entries and malformed items are left out", () => {
    expect(
      parseEscapedReport('CONCH_COMMAND_ID=c_m 7:S\nforks\n', ['CONCH_COMMAND_ID=c_m'], ['c_m'], 7),
    ).toEqual({
      escaped: new Map(),
      forks: [],
    });
    expect(
      parseEscapedReport(
        'CONCH_COMMAND_ID=c_other 12:S\nCONCH_COMMAND_ID=c_x 13 14:? 15:R\nforks 16:R',
        ['CONCH_COMMAND_ID=c_x'],
        ['c_x'],
        undefined,
      ),
    ).toEqual({ escaped: new Map([['c_x', [{ pid: 15, state: 'R' }]]]), forks: [{ pid: 16, state: 'R' }] });
  });
});

describe('parseConnectProbe', () => {
  it('reads the key=value lines, and nothing when no POSIX sh answered', () => {
    expect(
      parseConnectProbe('dir=/tmp/conch-x\nshell=/bin/zsh\nbash=\nuser=ada\nhome=/home/ada\nfacts=ps\n'),
    ).toEqual({
      privateDir: '/tmp/conch-x',
      loginShell: '/bin/zsh',
      bashPath: '',
      user: 'ada',
      home: '/home/ada',
      facts: 'ps',
    });
    expect(parseConnectProbe('Unknown command\n')).toBeUndefined();
  });
});
