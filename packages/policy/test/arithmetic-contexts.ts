// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, where ${…} is parameter expansion.
/**
 * A generated family of bash arithmetic contexts: every context × quoting style × expansion kind, each a
 * command that makes bash run an inner command although the policy's parser may see only quoted text.
 *
 * Bash reads an arithmetic context in one of two ways, and the quoting styles it evaluates follow from it:
 * - `raw`: bash expands the text as written, like a double-quoted string in which quotes are ordinary
 *   characters (subscripts of assignments and `${…}`, `${x:off:len}`, `(( ))`, `$(( ))`, `for (( ))`).
 *   A substitution inside '…', "…" or $'…' runs; one written with backslashes, or split across quotes, does
 *   not.
 * - `value`: the shell removes quotes first, then bash evaluates the value, expanding its array subscripts
 *   (`let`, `[[ -eq ]]` operands, `declare`/`read`/`printf -v`/`unset`/`test -v` names, `declare -i`
 *   values, array literals). Every quoting style runs.
 */

/** How the inner command is substituted. */
export const EXPANSION_KINDS = {
  '$( )': (command: string) => `$(${command})`,
  backticks: (command: string) => `\`${command}\``,
  nested: (command: string) => `$(echo $(${command}))`,
} as const;

/** Other expansions bash performs in arithmetic text, generated with single quotes only. */
export const OTHER_EXPANSION_KINDS = {
  '${u:-$( )}': (command: string) => `\${u:-$(${command})}`,
  '$(( $( ) ))': (command: string) => `$(($(${command})))`,
} as const;

export type ExpansionKind = keyof typeof EXPANSION_KINDS | keyof typeof OTHER_EXPANSION_KINDS;

/** Characters escaped with a backslash in the `escaped` style. */
const SPECIAL = /[$()`\\'" {}[\]:;|&<>]/g;

/**
 * How the text holding the substitution is quoted. `unit` is that text (the substitution, or `a[…]` around
 * it); `command` is the inner command, which occurs once in `unit`.
 */
export const QUOTING_STYLES = {
  none: (unit: string) => unit,
  "''": (unit: string) => `'${unit}'`,
  '""': (unit: string) => `"${unit}"`,
  "$''": (unit: string) => `$'${unit}'`,
  /** The inner command split across a single-quoted and a double-quoted part: `'$(rm -f'" vic"'tim)'`. */
  mixed: (unit: string, command: string) => {
    const at = unit.indexOf(command) + Math.floor(command.length / 2);
    const end = unit.indexOf(command) + command.length;
    return `'${unit.slice(0, at)}'"${unit.slice(at, end)}"'${unit.slice(end)}'`;
  },
  escaped: (unit: string) => unit.replace(SPECIAL, (c) => `\\${c}`),
} as const;

export type QuotingStyle = keyof typeof QUOTING_STYLES;

const ALL_STYLES = Object.keys(QUOTING_STYLES) as QuotingStyle[];
const RAW_STYLES: QuotingStyle[] = ['none', "''", '""', "$''"];

/** One arithmetic context: where the text goes, and which quoting styles bash evaluates there. */
export interface ArithmeticContext {
  /** A short name, e.g. `x[…]=1`. */
  readonly name: string;
  /** How bash reads the text (see the module comment). */
  readonly reading: 'raw' | 'value';
  /** The text holding the substitution: the substitution itself, or an array element or name around it. */
  readonly unit: 'bare' | 'element' | 'name';
  /** The command, given the quoted text. */
  readonly spell: (text: string) => string;
  /** The quoting styles bash evaluates here when they differ from what `reading` implies. */
  readonly styles?: readonly QuotingStyle[];
  /**
   * A built-in rule that denies the unquoted spelling whatever its inner command: an unquoted substitution
   * in a variable name can split into more names (`read x[$(…)]` could assign PATH).
   */
  readonly unquotedDeniedBy?: string;
}

const raw = (name: string, spell: (t: string) => string): ArithmeticContext => ({
  name,
  reading: 'raw',
  unit: 'bare',
  spell,
});
const value = (
  name: string,
  unit: 'bare' | 'element' | 'name',
  spell: (t: string) => string,
): ArithmeticContext => ({ name, reading: 'value', unit, spell });

/** Every arithmetic context of bash 5.2 that the policy knows. */
export const ARITHMETIC_CONTEXTS: readonly ArithmeticContext[] = [
  raw('x[…]=1', (t) => `x=(); x[${t}]=1`),
  raw('x[…]+=1', (t) => `x=(); x[${t}]+=1`),
  raw('${x[…]}', (t) => `x=(1); : \${x[${t}]}`),
  raw('${#x[…]}', (t) => `x=(1); : \${#x[${t}]}`),
  raw('${x[…]:-y}', (t) => `x=(1); : \${x[${t}]:-y}`),
  raw('"${x[…]}"', (t) => `x=(1); : "\${x[${t}]}"`),
  raw('${x[…]=1}', (t) => `x=(1); : \${x[${t}]=1}`),
  raw('${x[…]} in a here-document', (t) => `x=(1); cat <<E\n\${x[${t}]}\nE`),
  raw('${x:…}', (t) => `x=1; : \${x:${t}}`),
  raw('${x:0:…}', (t) => `x=1; : \${x:0:${t}}`),
  raw('${@:…}', (t) => `set -- a; : \${@:${t}}`),
  raw('${x[@]:…}', (t) => `x=(1); : \${x[@]:${t}}`),
  raw('(( x = … ))', (t) => `(( x = ${t} ))`),
  raw('$(( … ))', (t) => `: $(( ${t} ))`),
  raw('$[ … ]', (t) => `: $[ ${t} ]`),
  raw('for (( …; ; ))', (t) => `for ((i = ${t}; 0; )); do :; done`),
  raw('for (( ; …; ))', (t) => `for ((; 0 && ${t}; )); do :; done`),
  raw('for (( ; ; … ))', (t) => `for ((i = 0; i < 1; i++, y = ${t})); do :; done`),
  // In `(( ))` a quoted subscript is not expanded again; only what the shell itself expands runs.
  { ...raw('(( a[…] ))', (t) => `(( a[${t}] ))`), styles: ['none', '""'] },
  value('x=([…]=1)', 'bare', (t) => `x=([${t}]=1)`),
  value('declare -a x=([…]=1)', 'bare', (t) => `declare -a x=([${t}]=1)`),
  value('declare x[…]=1', 'bare', (t) => `declare x[${t}]=1`),
  value('typeset x[…]=1', 'bare', (t) => `typeset x[${t}]=1`),
  value('declare NAME=1', 'name', (t) => `declare ${t}=1`),
  value('typeset NAME=1', 'name', (t) => `typeset ${t}=1`),
  value('declare -i x=…', 'element', (t) => `declare -i x=${t}`),
  value('declare -i y; y=…', 'element', (t) => `declare -i y; y=${t}`),
  value('declare -i y; y+=…', 'element', (t) => `declare -i y; y+=${t}`),
  value('y=…; $((y))', 'element', (t) => `y=${t}; : $((y))`),
  value('let x=…', 'element', (t) => `let x=${t}`),
  value('let NAME=1', 'name', (t) => `let ${t}=1`),
  value('[[ … -eq 0 ]]', 'element', (t) => `[[ ${t} -eq 0 ]]`),
  value('[[ … -ne 1 ]]', 'element', (t) => `[[ ${t} -ne 1 ]]`),
  value('[[ 0 -lt … ]]', 'element', (t) => `[[ 0 -lt ${t} ]]`),
  value('[[ 0 -le … ]]', 'element', (t) => `[[ 0 -le ${t} ]]`),
  value('[[ … -gt 1 ]]', 'element', (t) => `[[ ${t} -gt 1 ]]`),
  value('[[ … -ge 0 ]]', 'element', (t) => `[[ ${t} -ge 0 ]]`),
  value('[[ -v … ]]', 'name', (t) => `[[ -v ${t} ]]`),
  value('test -v …', 'name', (t) => `test -v ${t}`),
  value('[ -v … ]', 'name', (t) => `[ -v ${t} ]`),
  { ...value('read NAME', 'name', (t) => `read ${t} <<< 1`), unquotedDeniedBy: 'policy:protected-variable' },
  {
    ...value('printf -v NAME', 'name', (t) => `printf -v ${t} 1`),
    unquotedDeniedBy: 'policy:protected-variable',
  },
  value('unset NAME', 'name', (t) => `x=(1); unset ${t}`),
  value('unset -v NAME', 'name', (t) => `x=(1); unset -v ${t}`),
];

/** The quoting styles bash evaluates in `context`. */
export function evaluatedStyles(context: ArithmeticContext): readonly QuotingStyle[] {
  return context.styles ?? (context.reading === 'raw' ? RAW_STYLES : ALL_STYLES);
}

/** One generated command. */
export interface ArithmeticCase {
  readonly context: string;
  readonly style: QuotingStyle;
  readonly kind: ExpansionKind;
  /** Whether bash evaluates this spelling (runs its inner command). */
  readonly evaluated: boolean;
  /** A built-in rule that denies this spelling whatever its inner command, if any. */
  readonly deniedBy: string | undefined;
  /** The command for an inner command. */
  readonly spell: (command: string) => string;
}

function unitOf(context: ArithmeticContext, substitution: string): string {
  if (context.unit === 'element') return `a[${substitution}]`;
  if (context.unit === 'name') return `x[${substitution}]`;
  return substitution;
}

function generated(
  context: ArithmeticContext,
  style: QuotingStyle,
  kind: ExpansionKind,
  substitute: (command: string) => string,
): ArithmeticCase {
  return {
    context: context.name,
    style,
    kind,
    evaluated: evaluatedStyles(context).includes(style),
    deniedBy: style === 'none' ? context.unquotedDeniedBy : undefined,
    spell: (command) => context.spell(QUOTING_STYLES[style](unitOf(context, substitute(command)), command)),
  };
}

/**
 * Every context × quoting style × expansion kind (the other expansion kinds with single quotes only),
 * including the styles bash does not evaluate in a context (`evaluated: false`).
 */
export function arithmeticCases(): ArithmeticCase[] {
  const cases: ArithmeticCase[] = [];
  for (const context of ARITHMETIC_CONTEXTS) {
    for (const style of ALL_STYLES) {
      for (const [kind, substitute] of Object.entries(EXPANSION_KINDS)) {
        cases.push(generated(context, style, kind as ExpansionKind, substitute));
      }
    }
    for (const [kind, substitute] of Object.entries(OTHER_EXPANSION_KINDS)) {
      cases.push(generated(context, "''", kind as ExpansionKind, substitute));
    }
  }
  return cases;
}
