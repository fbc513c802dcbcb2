import type { Arg } from './words.js';

/**
 * What `echo ARGS` prints in bash (without `xpg_echo`), or `undefined` when an argument is not static.
 * `args` excludes the name `echo`.
 */
export function echoOutput(args: readonly Arg[]): string | undefined {
  if (!args.every((a) => a.isStatic)) return undefined;
  let i = 0;
  let newline = true;
  let escapes = false;
  while (i < args.length && /^-[neE]+$/.test(args[i]!.value)) {
    for (const c of args[i]!.value.slice(1)) {
      if (c === 'n') newline = false;
      else if (c === 'e') escapes = true;
      else escapes = false;
    }
    i++;
  }
  let out = args
    .slice(i)
    .map((a) => a.value)
    .join(' ');
  if (escapes) {
    const r = decodeEscapes(out, true);
    out = r.text;
    if (r.stopped) return out;
  }
  return newline ? `${out}\n` : out;
}

/**
 * What `printf ARGS` prints in bash for the common directives (`%s %b %c %d %i %%`, escapes in the format);
 * `undefined` when an argument is not static or the format uses anything else (widths, `%q`, `%(…)T`).
 * `args` excludes the name `printf`. With `-v VAR` nothing is printed.
 */
export function printfOutput(args: readonly Arg[]): string | undefined {
  if (!args.every((a) => a.isStatic)) return undefined;
  let i = 0;
  if (args[0]?.value === '-v') return '';
  if (args[0]?.value.startsWith('-v')) return '';
  if (args[0]?.value === '--') i = 1;
  const format = args[i]?.value;
  if (format === undefined) return undefined;
  const operands = args.slice(i + 1).map((a) => a.value);
  let out = '';
  let k = 0;
  // The format is reused while operands remain (at least once).
  for (let round = 0; round < 1000; round++) {
    const start = k;
    let j = 0;
    while (j < format.length) {
      const c = format[j]!;
      if (c === '%') {
        const d = format[j + 1];
        if (d === '%') {
          out += '%';
          j += 2;
          continue;
        }
        const operand = operands[k];
        if (d === 's') out += operand ?? '';
        else if (d === 'b') {
          const r = decodeEscapes(operand ?? '', true);
          out += r.text;
          if (r.stopped) return out;
        } else if (d === 'c') out += (operand ?? '').slice(0, 1);
        else if (d === 'd' || d === 'i') {
          if (operand !== undefined && !/^[-+]?\d+$/.test(operand.trim())) return undefined;
          out += operand === undefined ? '0' : String(Number.parseInt(operand, 10));
        } else return undefined;
        if (operand !== undefined) k++;
        j += 2;
        continue;
      }
      if (c === '\\') {
        const r = decodeEscapes(format.slice(j, j + 5), false, true);
        out += r.text;
        j += r.consumed;
        continue;
      }
      out += c;
      j++;
    }
    if (k >= operands.length || k === start) break;
  }
  return out;
}

interface Unescaped {
  text: string;
  stopped: boolean;
  consumed: number;
}

/**
 * Processes backslash escapes as `echo -e` / `printf %b` (`zeroOctal`: `\0nnn`) or a printf format
 * (`single`: one escape only, `\nnn`) would.
 */
function decodeEscapes(input: string, zeroOctal: boolean, single = false): Unescaped {
  let text = '';
  let i = 0;
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    '"': '"',
    "'": "'",
  };
  while (i < input.length) {
    const c = input[i]!;
    if (c !== '\\' || i + 1 >= input.length) {
      if (single) return { text: c, stopped: false, consumed: 1 };
      text += c;
      i++;
      continue;
    }
    const d = input[i + 1]!;
    let consumed = 2;
    if (d === 'c' && !single) return { text, stopped: true, consumed: i + 2 };
    if (simple[d] !== undefined) text += simple[d];
    else if (d === 'x') {
      const m = /^[0-9a-fA-F]{1,2}/.exec(input.slice(i + 2));
      if (m) {
        text += String.fromCharCode(Number.parseInt(m[0], 16));
        consumed += m[0].length;
      } else text += '\\x';
    } else if (zeroOctal && d === '0') {
      const m = /^[0-7]{0,3}/.exec(input.slice(i + 2))!;
      text += String.fromCharCode(Number.parseInt(m[0] || '0', 8));
      consumed += m[0].length;
    } else if (!zeroOctal && /[0-7]/.test(d)) {
      const m = /^[0-7]{1,3}/.exec(input.slice(i + 1))!;
      text += String.fromCharCode(Number.parseInt(m[0], 8));
      consumed = 1 + m[0].length;
    } else text += `\\${d}`;
    if (single) return { text, stopped: false, consumed };
    i += consumed;
  }
  return { text, stopped: false, consumed: i };
}
