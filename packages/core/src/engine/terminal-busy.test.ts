import { describe, expect, it } from 'vitest';
import { TerminalBusy } from './terminal-busy.js';

const enc = (s: string) => new TextEncoder().encode(s);
const FREE = { free: true, byPerson: false };
const PERSON = { free: false, byPerson: true };

describe('TerminalBusy: when the shell is free for an agent', () => {
  it("conch's own command makes it busy, not because of a person", () => {
    expect(new TerminalBusy().judge(true, undefined)).toEqual({ free: false, byPerson: false });
    expect(new TerminalBusy().judge(false, undefined)).toEqual(FREE);
  });

  it("a person's unfinished line makes it busy until Enter or Ctrl+C", () => {
    const busy = new TerminalBusy();
    expect(busy.typed('echo hal', false)).toBeUndefined();
    expect(busy.judge(false, undefined)).toEqual(PERSON);
    busy.typed('\u0003', false);
    expect(busy.judge(false, undefined)).toEqual(FREE);
  });

  it("a person's submitted line makes it busy until the shell shows its prompt", () => {
    const busy = new TerminalBusy();
    expect(busy.typed('cat > notes\r', false)).toEqual({ text: 'cat > notes', exact: true });
    expect(busy.personHolds).toBe(true);
    expect(busy.judge(false, { shellHolds: true })).toEqual(PERSON);
    // Lines typed into the program are not the shell's: never returned (they may be secrets).
    expect(busy.typed('hunter2\r', false)).toBeUndefined();
    busy.prompt();
    expect(busy.judge(false, { shellHolds: true, evidence: 'blocked_read' })).toEqual(FREE);
  });

  it('a program holding the terminal (foreground group not the shell) makes it busy; an unknown host falls back on the rest', () => {
    const busy = new TerminalBusy();
    busy.typists = 1;
    expect(busy.needsLook).toBe(true);
    expect(busy.judge(false, { shellHolds: false })).toEqual(PERSON);
    expect(busy.judge(false, { shellHolds: true })).toEqual(FREE);
    expect(busy.judge(false, { shellHolds: undefined })).toEqual(FREE);
    busy.typists = 0;
    expect(busy.needsLook).toBe(false);
  });

  it('type-ahead (Enter while the shell was not at its prompt) needs the shell seen reading before it is free', () => {
    const busy = new TerminalBusy();
    expect(busy.typed('ls\r', true)).toBeUndefined();
    busy.prompt();
    expect(busy.needsLook).toBe(true);
    expect(busy.needsEvidence).toBe(true);
    expect(busy.judge(false, { shellHolds: true, evidence: 'no' })).toEqual(PERSON);
    expect(busy.judge(false, { shellHolds: true, evidence: 'blocked_read' })).toEqual(FREE);
    expect(busy.needsLook).toBe(false);
    // A paste of several lines: those after the first wait for whoever reads next.
    expect(busy.typed('cd /tmp\rsecret\r', false)).toEqual({ text: 'cd /tmp', exact: true });
    busy.prompt();
    expect(busy.needsEvidence).toBe(true);
  });

  it('keys typed while a full-screen program shows are its own and leave the line alone', () => {
    const busy = new TerminalBusy();
    busy.output(enc('\u001b[?1049h\u001b[H'));
    expect(busy.typed('ihello\u001bZZ', false)).toBeUndefined();
    busy.output(enc('\u001b[?10'));
    busy.output(enc('49l$ '));
    expect(busy.personHolds).toBe(false);
    busy.typed('q', false);
    expect(busy.personHolds).toBe(true);
  });

  it('says who watches and whether a person holds the terminal', () => {
    const busy = new TerminalBusy();
    expect(busy.attachedInfo()).toBeUndefined();
    busy.viewers = 2;
    expect(busy.attachedInfo()).toEqual({ viewers: 2, holds_terminal: false });
    busy.typed('vim\r', false);
    expect(busy.attachedInfo()).toEqual({ viewers: 2, holds_terminal: true });
    busy.viewers = 0;
    expect(busy.attachedInfo()).toEqual({ viewers: 0, holds_terminal: true });
  });
});
