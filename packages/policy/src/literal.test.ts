import { describe, expect, it } from 'vitest';
import { echoOutput, printfOutput } from './literal.js';
import { type Arg, syntheticArg } from './words.js';

const args = (...values: string[]): Arg[] => values.map((v) => syntheticArg(v));

describe('echoOutput', () => {
  it('joins its arguments as bash echo does', () => {
    expect(echoOutput(args('rm', 'x'))).toBe('rm x\n');
    expect(echoOutput(args('-n', 'rm', 'x'))).toBe('rm x');
    expect(echoOutput(args('-e', 'rm\\tx\\nls'))).toBe('rm\tx\nls\n');
    expect(echoOutput(args('rm\\nx'))).toBe('rm\\nx\n');
    expect(echoOutput(args('-e', 'a\\cb'))).toBe('a');
    expect(echoOutput(args('-e', '\\x72\\0155'))).toBe('rm\n');
  });

  it('gives up on words only known at run time', () => {
    expect(echoOutput([syntheticArg('$X', false)])).toBeUndefined();
  });
});

describe('printfOutput', () => {
  it('handles the common directives and escapes', () => {
    expect(printfOutput(args('rm victim\\n'))).toBe('rm victim\n');
    expect(printfOutput(args('%s %s\\n', 'rm', 'victim'))).toBe('rm victim\n');
    expect(printfOutput(args('%s\\n', 'a', 'b'))).toBe('a\nb\n');
    expect(printfOutput(args('%b', 'rm\\tx'))).toBe('rm\tx');
    expect(printfOutput(args('%c%c', 'rx', 'mx'))).toBe('rm');
    expect(printfOutput(args('%d%%', '42'))).toBe('42%');
    expect(printfOutput(args('\\162\\x6d'))).toBe('rm');
    expect(printfOutput(args('-v', 'X', 'rm'))).toBe('');
  });

  it('gives up on what it does not model', () => {
    expect(printfOutput(args('%5s', 'rm'))).toBeUndefined();
    expect(printfOutput(args('%q', 'rm'))).toBeUndefined();
    expect(printfOutput(args('%(%s)T'))).toBeUndefined();
    expect(printfOutput(args('%d', 'abc'))).toBeUndefined();
    expect(printfOutput([])).toBeUndefined();
  });
});
