import { type Arg, syntheticArg } from './words.js';

/** How a program's options are read by {@link scanOptions}. Every field is optional. */
export interface OptionTable {
  /** Short option letters that take a value (attached or the next word). */
  readonly short?: string;
  /** Short option letters with an optional attached value. */
  readonly optionalShort?: string;
  /** Long options that take the next word as a value when written without `=`. */
  readonly long?: readonly string[];
  /** `NAME=value` words (any name, as env accepts) before the command are assignments. */
  readonly env?: boolean;
  /** `NAME=value` words with an identifier name before the command are assignments (sudo). */
  readonly identifierAssignments?: boolean;
}

/** The options a program was given, as {@link scanOptions} read them. */
export interface OptionScan {
  /** Index of the first word after the options: the command. */
  index: number;
  /** True when a non-static word was met where an option or the command could be. */
  readonly dynamic: boolean;
  /** Every option given: short ones by their letter, long ones with their dashes. */
  readonly flags: Set<string>;
  /** The last value of each option that takes one. */
  readonly values: Map<string, Arg>;
  /** Every value of each option that takes one, in order. */
  readonly allValues: Map<string, Arg[]>;
  /** `NAME=value` words before the command (see {@link OptionTable}). */
  readonly assignments: Arg[];
}

/** Scans the options of a wrapper (getopt style, stopping at the first operand). */
export function scanOptions(args: readonly Arg[], start: number, table: OptionTable): OptionScan {
  const flags = new Set<string>();
  const values = new Map<string, Arg>();
  const allValues = new Map<string, Arg[]>();
  const assignments: Arg[] = [];
  const record = (key: string, value: Arg | undefined) => {
    if (value === undefined) return;
    values.set(key, value);
    allValues.set(key, [...(allValues.get(key) ?? []), value]);
  };
  let i = start;
  while (i < args.length) {
    const word = args[i]!;
    if (!word.isStatic) return { index: i, dynamic: true, flags, values, allValues, assignments };
    const v = word.value;
    if (v === '--') {
      i++;
      break;
    }
    if (v.startsWith('--') && v.length > 2) {
      const eq = v.indexOf('=');
      const name = eq >= 0 ? v.slice(0, eq) : v;
      flags.add(name);
      if (eq >= 0) record(name, syntheticArg(v.slice(eq + 1)));
      else if (table.long?.includes(name)) {
        record(name, args[i + 1]);
        i++;
      }
      i++;
      continue;
    }
    if (v === '-' && table.env) {
      flags.add('i');
      i++;
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      for (let j = 1; j < v.length; j++) {
        const c = v[j]!;
        flags.add(c);
        if (table.short?.includes(c)) {
          const attached = v.slice(j + 1);
          if (attached) record(c, syntheticArg(attached));
          else {
            record(c, args[i + 1]);
            i++;
          }
          break;
        }
        if (table.optionalShort?.includes(c)) {
          record(c, syntheticArg(v.slice(j + 1)));
          break;
        }
      }
      i++;
      continue;
    }
    if (
      (table.env && /^[^=]+=/.test(v)) ||
      (table.identifierAssignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(v))
    ) {
      assignments.push(word);
      i++;
      continue;
    }
    break;
  }
  return { index: i, dynamic: false, flags, values, allValues, assignments };
}
