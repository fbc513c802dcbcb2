import { describe, expect, it } from 'vitest';
import { ConchError, ErrorCode } from '../errors.js';
import {
  CursorKeyModeTracker,
  encodeKey,
  encodeKeys,
  isValidKey,
  KEY_NAMES,
  KeyMap,
  parseKey,
  signalForKey,
} from './key-map.js';

const normal = { applicationCursor: false };
const app = { applicationCursor: true };

function thrown(fn: () => unknown): ConchError {
  try {
    fn();
  } catch (e) {
    if (ConchError.is(e)) return e;
    throw e;
  }
  throw new Error('expected a ConchError');
}

describe('encodeKeys: control keys', () => {
  it.each(Array.from('abcdefghijklmnopqrstuvwxyz'))('ctrl+%s is the C0 control code', (letter) => {
    const expected = String.fromCharCode(letter.charCodeAt(0) - 96);
    expect(encodeKeys(`ctrl+${letter}`, normal)).toBe(expected);
    expect(encodeKeys(`CTRL+${letter.toUpperCase()}`, normal)).toBe(expected);
    expect(encodeKeys(`ctrl-${letter}`, normal)).toBe(expected);
    expect(encodeKeys(`C-${letter}`, normal)).toBe(expected);
    expect(encodeKeys(`c-${letter}`, normal)).toBe(expected);
    expect(encodeKeys(`^${letter.toUpperCase()}`, normal)).toBe(expected);
    expect(encodeKeys(`^${letter}`, normal)).toBe(expected);
    expect(encodeKeys(`Control + ${letter}`, normal)).toBe(expected);
  });

  it.each([
    ['ctrl+[', '\x1b'],
    ['ctrl+\\', '\x1c'],
    ['ctrl+]', '\x1d'],
    ['ctrl+^', '\x1e'],
    ['ctrl+_', '\x1f'],
    ['ctrl+@', '\x00'],
    ['ctrl+space', '\x00'],
    ['ctrl + space', '\x00'],
    ['ctrl+?', '\x7f'],
    ['ctrl+/', '\x1f'],
    ['^[', '\x1b'],
    ['^\\', '\x1c'],
    ['^]', '\x1d'],
    ['^^', '\x1e'],
    ['^_', '\x1f'],
    ['^@', '\x00'],
    ['^?', '\x7f'],
    ['C-[', '\x1b'],
    ['C-@', '\x00'],
    ['ctrl+shift+c', '\x03'],
  ])('%j → %j', (name, bytes) => {
    expect(encodeKeys(name, normal)).toBe(bytes);
  });
});

describe('encodeKeys: named keys', () => {
  it.each([
    ['esc', '\x1b'],
    ['escape', '\x1b'],
    ['ESC', '\x1b'],
    ['Escape', '\x1b'],
    ['tab', '\t'],
    ['TAB', '\t'],
    ['shift+tab', '\x1b[Z'],
    ['shift-tab', '\x1b[Z'],
    ['Shift + Tab', '\x1b[Z'],
    ['S-tab', '\x1b[Z'],
    ['backtab', '\x1b[Z'],
    ['enter', '\r'],
    ['return', '\r'],
    ['Enter', '\r'],
    ['space', ' '],
    ['backspace', '\x7f'],
    ['BackSpace', '\x7f'],
    ['ctrl+backspace', '\x08'],
    ['alt+backspace', '\x1b\x7f'],
    ['delete', '\x1b[3~'],
    ['del', '\x1b[3~'],
    ['insert', '\x1b[2~'],
    ['ins', '\x1b[2~'],
    ['pageup', '\x1b[5~'],
    ['pagedown', '\x1b[6~'],
    ['PageUp', '\x1b[5~'],
    ['page up', '\x1b[5~'],
    ['pgup', '\x1b[5~'],
    ['pgdn', '\x1b[6~'],
    ['page_down', '\x1b[6~'],
    ['f1', '\x1bOP'],
    ['f2', '\x1bOQ'],
    ['f3', '\x1bOR'],
    ['f4', '\x1bOS'],
    ['f5', '\x1b[15~'],
    ['f6', '\x1b[17~'],
    ['f7', '\x1b[18~'],
    ['f8', '\x1b[19~'],
    ['f9', '\x1b[20~'],
    ['f10', '\x1b[21~'],
    ['f11', '\x1b[23~'],
    ['F12', '\x1b[24~'],
  ])('%j → %j', (name, bytes) => {
    expect(encodeKeys(name, normal)).toBe(bytes);
    // Only arrows and home/end depend on DECCKM.
    expect(encodeKeys(name, app)).toBe(bytes);
  });
});

describe('encodeKeys: cursor keys follow DECCKM', () => {
  it.each([
    ['up', 'A'],
    ['down', 'B'],
    ['right', 'C'],
    ['left', 'D'],
    ['home', 'H'],
    ['end', 'F'],
    ['UP', 'A'],
    ['ArrowLeft', 'D'],
  ])('%s', (name, final) => {
    expect(encodeKeys(name, normal)).toBe(`\x1b[${final}`);
    expect(encodeKeys(name, app)).toBe(`\x1bO${final}`);
  });

  it('uses xterm modifier parameters with modifiers, whatever the mode', () => {
    for (const opts of [normal, app]) {
      expect(encodeKeys('ctrl+left', opts)).toBe('\x1b[1;5D');
      expect(encodeKeys('ctrl+right', opts)).toBe('\x1b[1;5C');
      expect(encodeKeys('shift+up', opts)).toBe('\x1b[1;2A');
      expect(encodeKeys('alt+down', opts)).toBe('\x1b[1;3B');
      expect(encodeKeys('ctrl+alt+shift+home', opts)).toBe('\x1b[1;8H');
      expect(encodeKeys('shift+end', opts)).toBe('\x1b[1;2F');
    }
    expect(encodeKeys('ctrl+delete', normal)).toBe('\x1b[3;5~');
    expect(encodeKeys('shift+pageup', normal)).toBe('\x1b[5;2~');
    expect(encodeKeys('shift+f1', normal)).toBe('\x1b[1;2P');
    expect(encodeKeys('ctrl+f5', normal)).toBe('\x1b[15;5~');
    expect(encodeKeys('alt+f12', normal)).toBe('\x1b[24;3~');
  });
});

describe('encodeKeys: alt and characters', () => {
  it.each([
    ['alt+x', '\x1bx'],
    ['Alt+X', '\x1bx'],
    ['alt+shift+x', '\x1bX'],
    ['M-x', '\x1bx'],
    ['meta+b', '\x1bb'],
    ['alt+.', '\x1b.'],
    ['alt+1', '\x1b1'],
    ['alt+-', '\x1b-'],
    ['alt++', '\x1b+'],
    ['alt+ä', '\x1bä'],
    ['alt+enter', '\x1b\r'],
    ['alt+esc', '\x1b\x1b'],
    ['alt+tab', '\x1b\t'],
    ['alt+space', '\x1b '],
    ['alt+ctrl+x', '\x1b\x18'],
    ['ctrl+alt+x', '\x1b\x18'],
    ['C-M-x', '\x1b\x18'],
    ['alt+^x', '\x1b\x18'],
    ['ctrl+alt+space', '\x1b\x00'],
    ['shift+a', 'A'],
    ['q', 'q'],
    ['G', 'G'],
    ['c', 'c'],
    ['^', '^'],
    ['-', '-'],
    ['+', '+'],
    ['/', '/'],
    [':', ':'],
    ['é', 'é'],
  ])('%j → %j', (name, bytes) => {
    expect(encodeKeys(name, normal)).toBe(bytes);
  });
});

describe('encodeKeys: arrays', () => {
  it('concatenates the keys in order', () => {
    expect(encodeKeys(['esc', ':', 'w', 'q', 'enter'], normal)).toBe('\x1b:wq\r');
    expect(encodeKeys(['up', 'up', 'enter'], app)).toBe('\x1bOA\x1bOA\r');
    expect(encodeKeys(['ctrl+x', 'ctrl+s'], normal)).toBe('\x18\x13');
  });

  it('encodes nothing when any name is bad, and names the bad one', () => {
    const e = thrown(() => encodeKeys(['ctrl+c', 'bogus', 'enter'], normal));
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(e.message).toContain('"bogus"');
    expect(e.message).not.toContain('"ctrl+c"');
    expect(e.data?.key).toBe('bogus');
  });

  it('rejects an empty array', () => {
    const e = thrown(() => encodeKeys([], normal));
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(e.message).toContain('Valid keys');
  });
});

describe('encodeKeys: errors', () => {
  it.each([
    'bogus',
    'ctrl+',
    'ctrl+c+',
    '',
    '   ',
    'hyper+x',
    'ctrl+1',
    'ctrl+enter',
    'shift+enter',
    'shift+1',
    'shift+esc',
    'ctrl+tab',
    'f13',
    'f0',
    'pageupp',
    'ctrl+foo',
    'page-up',
    '\x03',
  ])('%j is INVALID_ARGUMENT listing the valid names', (name) => {
    const e = thrown(() => encodeKeys(name, normal));
    expect(e).toBeInstanceOf(ConchError);
    expect(e.code).toBe(ErrorCode.INVALID_ARGUMENT);
    expect(e.message).toContain(JSON.stringify(name));
    expect(e.message).toContain('Valid keys:');
    expect(e.message).toContain('ctrl+a…ctrl+z');
    expect(e.message).toContain('shift+tab');
    expect(e.message).toContain('f1…f12');
    expect(e.message).toContain('alt+<char>');
    expect(e.data?.valid).toBe(KEY_NAMES);
    expect(isValidKey(name)).toBe(false);
  });

  it('rejects non-strings', () => {
    expect(() => encodeKeys([42 as unknown as string], normal)).toThrow(ConchError);
    expect(() => encodeKeys({} as unknown as string, normal)).toThrow(ConchError);
  });
});

describe('KEY_NAMES', () => {
  it('lists every documented key and each listed name encodes', () => {
    for (const name of [
      'ctrl+a',
      'ctrl+z',
      'ctrl+[',
      'ctrl+\\',
      'ctrl+]',
      'ctrl+^',
      'ctrl+_',
      'ctrl+@',
      'esc',
      'tab',
      'shift+tab',
      'enter',
      'space',
      'backspace',
      'delete',
      'insert',
      'up',
      'down',
      'left',
      'right',
      'home',
      'end',
      'pageup',
      'pagedown',
      'f1',
      'f12',
      'alt+<char>',
    ]) {
      expect(KEY_NAMES).toContain(name);
    }
    for (const name of KEY_NAMES) {
      if (name === 'alt+<char>') continue;
      expect(isValidKey(name), name).toBe(true);
    }
  });

  it('KeyMap groups the API', () => {
    expect(KeyMap.encode(['ctrl+c'], normal)).toBe('\x03');
    expect(KeyMap.names).toBe(KEY_NAMES);
    expect(KeyMap.signalFor('^C')).toBe('SIGINT');
    expect(encodeKey('up', app)).toBe('\x1bOA');
  });
});

describe('parseKey', () => {
  it('returns modifiers and the base key', () => {
    expect(parseKey('C-M-x')).toEqual({ ctrl: true, alt: true, shift: false, key: 'x', isChar: true });
    expect(parseKey('Shift+Tab')).toEqual({
      ctrl: false,
      alt: false,
      shift: true,
      key: 'tab',
      isChar: false,
    });
    expect(parseKey('escape')).toEqual({ ctrl: false, alt: false, shift: false, key: 'esc', isChar: false });
  });
});

describe('signalForKey', () => {
  it.each([
    ['ctrl+c', 'SIGINT'],
    ['^C', 'SIGINT'],
    ['C-c', 'SIGINT'],
    ['CTRL + C', 'SIGINT'],
    ['ctrl+\\', 'SIGQUIT'],
    ['^\\', 'SIGQUIT'],
    ['ctrl+z', 'SIGTSTP'],
    ['^Z', 'SIGTSTP'],
    ['ctrl+d', undefined],
    ['alt+ctrl+c', undefined],
    ['c', undefined],
    ['enter', undefined],
    ['bogus', undefined],
  ])('%j → %s', (name, signal) => {
    expect(signalForKey(name)).toBe(signal);
  });
});

describe('CursorKeyModeTracker', () => {
  it('follows DECCKM set and reset, also split across chunks', () => {
    const t = new CursorKeyModeTracker();
    expect(t.applicationCursor).toBe(false);
    t.write('hello\x1b[?1h');
    expect(t.applicationCursor).toBe(true);
    t.write(new TextEncoder().encode('\x1b[?1'));
    t.write('l');
    expect(t.applicationCursor).toBe(false);
    t.write('\x1b[?1049;1h'); // vim: alt screen + DECCKM in one sequence
    expect(t.applicationCursor).toBe(true);
    t.write('\x1b[?12l\x1b[?25h\x1b[1m'); // other modes do not touch it
    expect(t.applicationCursor).toBe(true);
    t.write('\x1b[!p'); // soft reset
    expect(t.applicationCursor).toBe(false);
    t.write('\x1b[?1h');
    t.write('\x1bc'); // hard reset
    expect(t.applicationCursor).toBe(false);
    t.write('\x1b[1h'); // ANSI mode 1 (not private) is not DECCKM
    expect(t.applicationCursor).toBe(false);
  });
});
