import type { Finding } from './finding.js';
import type { ProgramHandler } from './handler-api.js';
import { protectedVariableIssue } from './issues.js';
import { isProtectedVariable } from './programs.js';
import { type Arg, assignedName, syntheticArg, variableNameOf } from './words.js';

/**
 * Handlers of shell builtins that change what later commands mean: aliases, builtins switched on or off,
 * hashed paths, key bindings, history re-runs, completion commands, and the builtins that assign
 * variables (which must not be protected ones such as PATH).
 */

/** A builtin denied under any rule when `denied` holds for its arguments. */
function deniedWhen(
  denied: (rest: readonly Arg[]) => boolean,
  rule: string,
  message: (name: string) => string,
): ProgramHandler {
  return ({ finding, args }) => {
    if (denied(args.slice(1))) finding.issues.push({ rule, message: message(finding.name) });
  };
}

/** `export`/`declare`/`typeset`/`readonly`/`local`: the variables they assign, and `-n` namerefs. */
const declaration: ProgramHandler = ({ finding, args }) => {
  for (const word of args.slice(1)) {
    const arrayName = word.isStatic ? undefined : variableNameOf(word);
    if (arrayName !== undefined) {
      // `"x[$i]"=v`: the subscript is only known at run time, the variable is not.
      if (isProtectedVariable(arrayName)) finding.issues.push(protectedVariableIssue(arrayName));
      continue;
    }
    if (!word.isStatic && !/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(word.text)) {
      finding.issues.push({
        rule: 'policy:protected-variable',
        message: `"${finding.name} ${word.text}" could assign any variable, such as PATH, since the word is only known at run time`,
      });
      continue;
    }
    const v = word.isStatic ? word.value : word.text;
    if (/^-[a-zA-Z]*n/.test(v)) {
      finding.issues.push({
        rule: 'policy:nameref',
        message: `"${finding.name} -n" makes a name refer to another variable (which could be PATH)`,
      });
      continue;
    }
    const name = assignedName(v);
    if (name !== undefined && isProtectedVariable(name)) finding.issues.push(protectedVariableIssue(name));
  }
};

/** `read`/`mapfile` style: options in `withValue` take a value; the rest are variable names. */
function checkVariableTargets(
  finding: Finding,
  rest: readonly Arg[],
  withValue: string,
  nameOption: string,
): void {
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.isStatic) {
      checkVariableName(finding, word);
      continue;
    }
    const v = word.value;
    if (v.startsWith('-') && v.length > 1) {
      for (let j = 1; j < v.length; j++) {
        const c = v[j]!;
        if (!withValue.includes(c)) continue;
        const attached = v.slice(j + 1);
        const value = attached ? syntheticArg(attached) : rest[++i];
        if (c === nameOption && value !== undefined) checkVariableName(finding, value);
        break;
      }
      continue;
    }
    checkVariableName(finding, word);
  }
}

/** A variable a builtin assigns must be known, and not a protected one. */
function checkVariableName(finding: Finding, word: Arg): void {
  const name = variableNameOf(word);
  if (name === undefined) {
    finding.issues.push({
      rule: 'policy:protected-variable',
      message: `"${finding.name}" would assign a variable named at run time ("${word.text}"), which could be PATH`,
    });
  } else if (isProtectedVariable(name)) {
    finding.issues.push(protectedVariableIssue(word.value));
  }
}

/** `mapfile`/`readarray`: `-C` runs a command for each line; the array it fills. */
const mapfile: ProgramHandler = ({ finding, args }) => {
  const rest = args.slice(1);
  if (rest.some((a) => !a.isStatic || /^-[a-zA-Z]*C/.test(a.value))) {
    finding.issues.push({
      rule: 'policy:mapfile-callback',
      message: `"${finding.name} -C" runs a command for each line`,
    });
  }
  checkVariableTargets(finding, rest, 'dnOsuCc', '');
};

/** The builtins that change shell state, by name. */
export const BUILTIN_HANDLERS: ReadonlyMap<string, ProgramHandler> = new Map<string, ProgramHandler>([
  [
    'alias',
    deniedWhen(
      (rest) => rest.some((a) => !a.isStatic || a.value.includes('=')),
      'policy:alias',
      () => 'alias definitions change what later commands mean',
    ),
  ],
  [
    'enable',
    deniedWhen(
      () => true,
      'policy:enable',
      () => '"enable" switches shell builtins on or off or loads new ones, changing what later commands mean',
    ),
  ],
  [
    'hash',
    deniedWhen(
      (rest) => rest.some((a) => !a.isStatic || /^-[a-z]*p/.test(a.value)),
      'policy:hash',
      () => '"hash -p" makes a command name run another program',
    ),
  ],
  [
    'bind',
    deniedWhen(
      (rest) => !rest.every((a) => a.isStatic && /^-[lpPvVsSX]+$/.test(a.value) && !a.value.includes('X')),
      'policy:bind',
      () => '"bind" can make a key run a command',
    ),
  ],
  [
    'fc',
    deniedWhen(
      (rest) =>
        !rest.some((a) => a.isStatic && /^-[nr]*l[lnr]*$/.test(a.value)) ||
        !rest.every((a) => a.isStatic && !/^-[a-z]*[es]/.test(a.value)),
      'policy:fc',
      () => '"fc" runs commands from the history, edited by a program',
    ),
  ],
  ...(['complete', 'compgen'] as const).map(
    (name) =>
      [
        name,
        deniedWhen(
          (rest) => rest.some((a) => !a.isStatic || /^-[a-zA-Z]*[CF]/.test(a.value)),
          'policy:completion-command',
          (program) => `"${program} -C/-F" runs a command or function to complete words`,
        ),
      ] as const,
  ),
  ...(['export', 'declare', 'typeset', 'readonly', 'local'] as const).map(
    (name) => [name, declaration] as const,
  ),
  ['read', ({ finding, args }) => checkVariableTargets(finding, args.slice(1), 'adinNptu', 'a')],
  ['mapfile', mapfile],
  ['readarray', mapfile],
  [
    'printf',
    ({ finding, args }) => {
      const name = args[1]?.value === '-v' ? args[2] : undefined;
      if (name !== undefined) checkVariableName(finding, name);
    },
  ],
  [
    'getopts',
    ({ finding, args }) => {
      const name = args[2];
      if (name !== undefined) checkVariableName(finding, name);
    },
  ],
]);
