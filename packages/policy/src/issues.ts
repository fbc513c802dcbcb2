import type { Issue } from './finding.js';
import { isProtectedVariable } from './programs.js';
import type { Arg } from './words.js';

/** The built-in issues that more than one check raises, worded once. */

/** Assigning a variable that changes what later commands, or the programs they start, do. */
export function protectedVariableIssue(name: string): Issue {
  return {
    rule: 'policy:protected-variable',
    message: `assigning ${name} changes what later commands or the programs they start do`,
  };
}

/** `what` runs commands that cannot be checked, because of `why`. */
export function dynamicScriptIssue(what: string, why: string): Issue {
  return { rule: 'policy:dynamic-script', message: `"${what}" runs commands that cannot be checked: ${why}` };
}

/** `what` has an argument only known at run time, which could be an option that runs a program. */
export function unverifiableArgumentIssue(what: string, argument: Arg): Issue {
  return {
    rule: 'policy:unverifiable-arguments',
    message: `"${what}" has an argument only known at run time ("${argument.text}"), which could be an option that runs a program`,
  };
}

/** Why a command found in arithmetic text counts: denied with it. */
export function arithmeticIssue(display: string): Issue {
  return {
    rule: 'policy:arithmetic-injection',
    message: `bash evaluates "${display.slice(0, 60)}" arithmetically, where quotes do not stop the substitutions in it from running`,
    onlyWhenInnerDenied: true,
  };
}

/** Arithmetic text whose substitutions cannot be checked: denied under any rule. */
export function uncheckableArithmeticIssue(display: string, why: string): Issue {
  return {
    rule: 'policy:arithmetic-injection',
    message: `bash evaluates "${display.slice(0, 60)}" arithmetically, where quotes do not stop substitutions from running, and they cannot be checked: ${why}`,
  };
}

/** The issues of the `NAME=value` words given to a wrapper (`env`, `sudo`) that assign protected variables. */
export function protectedAssignmentIssues(assignments: readonly Arg[]): Issue[] {
  const issues: Issue[] = [];
  for (const a of assignments) {
    const name = a.value.slice(0, a.value.indexOf('='));
    if (isProtectedVariable(name)) issues.push(protectedVariableIssue(name));
  }
  return issues;
}
