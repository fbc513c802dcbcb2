/**
 * PromptClassifier: decides from the tail of a command's text output whether the program is probably
 * waiting for input, and which kind of prompt it shows (docs/waiting.md item 2).
 *
 * Only the last, unterminated line is classified (a prompt leaves the cursor on its line); a few lines
 * before it are used as context (e.g. Python's `... ` only counts after a `>>> ` line). Kinds are graded:
 * `password`, `yes_no`, `pager`, `press_key` and `repl` are *certain* (specific patterns); `text` (a short
 * line ending in `: ` or `? `) is only *likely*, and the engine should trust it less.
 *
 * Pure and linear: at most the last {@link PROMPT_TAIL_CHARS} characters are looked at, and every regex is
 * anchored with bounded repetitions.
 */
import type { PromptInfo, PromptKind } from '../types.js';

/** How many characters at the end of the output the classifier looks at. */
export const PROMPT_TAIL_CHARS = 500;

/** Maximum length of the returned prompt text. */
export const PROMPT_TEXT_MAX = 200;

/** How far a detected prompt can be trusted: `certain` for specific patterns, `likely` for `text`. */
export type PromptCertainty = 'certain' | 'likely';

/** A classified prompt with its certainty. */
export interface ClassifiedPrompt extends PromptInfo {
  certainty: PromptCertainty;
}

/** The certainty of each prompt kind. */
export function promptCertainty(kind: PromptKind): PromptCertainty {
  return kind === 'text' ? 'likely' : 'certain';
}

/** True when the prompt's kind comes from a specific pattern (everything but `text`). */
export function isCertainPrompt(prompt: PromptInfo): boolean {
  return promptCertainty(prompt.kind) === 'certain';
}

// Terminal escapes that may survive in a tail that was not rendered (defensive; the text view has none).
const ESCAPES = /\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;
const CONTROLS = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]/g;

/** Splits the tail into the last line (unterminated) and up to a few context lines before it. */
function splitTail(tail: string): { last: string; before: string[] } {
  let text = tail.length > PROMPT_TAIL_CHARS ? tail.slice(-PROMPT_TAIL_CHARS) : tail;
  text = text.replace(ESCAPES, '').replace(/\r+\n/g, '\n');
  const nl = text.lastIndexOf('\n');
  let last = text.slice(nl + 1);
  // A carriage return rewrites the line: the text after the last CR (if any) is what is shown.
  const cr = last.replace(/\r+$/, '').lastIndexOf('\r');
  if (cr >= 0) last = last.slice(cr + 1);
  last = last.replace(/\r/g, '').replace(CONTROLS, '');
  const before = nl < 0 ? [] : text.slice(0, nl).split('\n').slice(-5);
  return { last, before };
}

// --- pager -------------------------------------------------------------------------------------------
const PAGER_PATTERNS: readonly RegExp[] = [
  /^:$/, // less waiting for a command
  /^.{0,160}\(END\)$/, // less at the end of its input: "(END)" or "file (END)"
  /^-{1,2} ?more ?-{1,2}(?: ?\(\d{1,3}%\))?$/i, // more: --More--, --More--(50%)
  /^lines \d{1,9}-\d{1,9}(?:\/\d{1,9})?(?: \d{1,3}%)?(?: \(END\))?$/i, // less -M style status
  /^(?:byte|line) \d{1,12}(?:\/\d{1,12})?(?: \d{1,3}%)?$/i,
  /^manual page .{1,120} line \d{1,9}.{0,80}$/i, // man's less prompt (it says "press h for help")
  /^\(?press return\)?\.?$/i, // less/man after a shell escape: "(press RETURN)"
  /^.{0,120}press return for more.{0,60}$/i, // less help: "HELP -- Press RETURN for more, or q when done"
  /^press return to continue\.?$/i,
];

// --- password ---------------------------------------------------------------------------------------
const SECRET_WORD = /\b(?:password|passphrase|passcode|passwd|pin|verification code|one-time code|otp)\b/i;
const SECRET_END = /[:?>]$/;
const SECRET_START =
  /^\[?(?:sudo\]\s*)?(?:enter|type|input|re-?enter|re-?type|retype|confirm|verify|new|current|old)\b/i;

// --- yes/no -----------------------------------------------------------------------------------------
const CHOICE_GROUP = /\(([^()\n]{1,60})\)|\[([^[\]\n]{1,60})\]/g;
const YES = /^(?:y|yes)$/i;
const NO = /^(?:n|no)$/i;
const BARE_YES_NO = /\b(?:y(?:es)?\/n(?:o)?|y(?:es)? or n(?:o)?)[\s?:]{0,4}$/i;

function isYesNoGroup(content: string): boolean {
  const options = content
    .split(/\s*(?:\/|,|\bor\b)\s*/i)
    .map((o) => o.replace(/^[\s[\]]+|[\s[\]]+$/g, '').replace(/^(?:default:?\s*)/i, ''));
  return options.some((o) => YES.test(o)) && options.some((o) => NO.test(o));
}

function isYesNo(line: string): boolean {
  if (BARE_YES_NO.test(line)) return true;
  let lastEnd = -1;
  for (const m of line.matchAll(CHOICE_GROUP)) {
    const content = m[1] ?? m[2] ?? '';
    if (isYesNoGroup(content)) lastEnd = m.index + m[0].length;
  }
  // The choice group must be at (or near) the end: "Overwrite (y/n) [n]: " or "Continue? [Y/n] ".
  return lastEnd >= 0 && line.length - lastEnd <= 24;
}

// --- press a key ------------------------------------------------------------------------------------
const PRESS_KEY_PATTERNS: readonly RegExp[] = [
  /\bpress any key\b/i,
  /\bhit any key\b/i,
  /\b(?:press|hit|type) <?(?:enter|return)>?(?: key)? (?:to|when) (?:continue|proceed|resume|exit|go back|return|close|start|begin|finish|ready)/i,
  /\bpress enter or type command to continue\b/i, // vim
  /^\(?(?:press|hit) <?(?:enter|return)>?\)?[\s.…!]{0,4}$/i,
];

// --- REPLs and shells -------------------------------------------------------------------------------
const REPL_PATTERNS: readonly RegExp[] = [
  /^>>> ?$/, // python
  /^In \[\d{1,6}\]: ?$/, // ipython
  /^ {2,12}\.{3,}: ?$/, // ipython continuation "   ...: "
  /^irb\([^)\n]{1,40}\):\d{1,6}(?::\d{1,4})?[>*"'] ?$/, // irb
  /^\[\d{1,6}\] pry\([^)\n]{1,40}\)[>*] ?$/, // pry
  /^(?:mysql|mariadb|MariaDB \[[^\]\n]{1,64}\])> ?$/, // mysql / mariadb
  /^ {0,12}-> $/, // mysql continuation
  /^sqlite> ?$/,
  /^ {0,12}\.\.\.> $/, // sqlite continuation
  /^[A-Za-z_][\w$.-]{0,63}[=\-(*'"][#>] $/, // psql: "postgres=# ", "db=> ", "db-# "
  /^\((?:Pdb|Pdb\+\+|gdb|lldb|cuda-gdb)\) ?$/, // debuggers
  /^(?:ipdb|ipdb\+\+|pdb\+\+)> ?$/,
  /^> $/, // node, R, lua, mongo; also a shell's PS2
  /^[a-z][\w.-]{0,30}> $/i, // julia>, scala>, ghci>, sftp>, ftp>, hive>, cqlsh>, Prelude> …
  /^(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}(?:\[\d{1,3}\])?> $/, // redis-cli "127.0.0.1:6379> "
  /^iex\(\d{1,6}\)> ?$/, // elixir
  /^[$#%] $/, // sh, dash, plain shells
  /^(?:ba|z|da|k|c|tc|fi)?sh(?:-\d{1,3}(?:\.\d{1,3}){0,2})?[$#] $/, // "bash-5.2$ ", "sh-5.1# "
  /^(?:\([^()\n]{1,40}\) )?[\w.-]{1,64}@[\w.-]{1,64}[: ][^\n]{0,200}[$#%] $/, // user@host:~/dir$
];

function isRepl(line: string, before: readonly string[]): boolean {
  if (REPL_PATTERNS.some((re) => re.test(line))) return true;
  // Python's continuation prompt "... " only after a ">>> " or "... " line (pytest's "collecting ... " is not).
  if (/^\.\.\. ?$/.test(line)) {
    const previous = before[before.length - 1] ?? '';
    return /^(?:>>>|\.\.\.)(?: |$)/.test(previous);
  }
  return false;
}

// --- likely text prompts ----------------------------------------------------------------------------
const TEXT_MAX = 100;
const TEXT_END = /[^\s:?][:?] ?$/;
const NOT_TEXT: readonly RegExp[] = [
  /:\/\//, // URLs
  /\d%/, // progress percentages
  /[█▏▎▍▌▋▊▉░▒▓]|[#=]{3}/, // progress bars
  /::$/, // pytest node ids, C++ names
  /^\s*(?:\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d)/, // timestamps: log lines
  /^\s*\[?(?:trace|debug|info|notice|warn|warning|error|fatal|critical)\b\]?[:\s]/i, // log levels
  /\.{3}|…/, // "Loading...", "collecting ..."
  /\b(?:press|hit|type)\b.{0,40}\b(?:to|for)\b.{0,40}\b(?:help|quit|stop|exit|open|restart|reload|clear|show)\b/i, // dev-server hints
  /\bctrl\s*[-+]\s*c\b/i,
];

function isTextPrompt(line: string): boolean {
  // The ":" or "?" must end the line or be followed by exactly one space.
  if (line.length > TEXT_MAX || !TEXT_END.test(line) || !/\p{L}/u.test(line)) return false;
  return !NOT_TEXT.some((re) => re.test(line));
}

/** The prompt text to report: the last line, trimmed, at most {@link PROMPT_TEXT_MAX} characters. */
function promptText(line: string): string {
  const trimmed = line.trim();
  return trimmed.length <= PROMPT_TEXT_MAX ? trimmed : `…${trimmed.slice(-(PROMPT_TEXT_MAX - 1))}`;
}

/**
 * Classifies the tail of a command's text output (the last, usually unterminated, line plus a little
 * before it) and returns the prompt kind and its text with its certainty, or undefined when it does not
 * look like a program waiting for input. A tail ending in a newline is never a prompt.
 */
export function classifyPromptDetailed(tail: string): ClassifiedPrompt | undefined {
  const { last, before } = splitTail(tail);
  if (last.trim() === '') return undefined;
  const text = promptText(last);
  const found = (kind: PromptKind): ClassifiedPrompt => ({ kind, text, certainty: promptCertainty(kind) });
  const line = last.trimEnd();

  if (PAGER_PATTERNS.some((re) => re.test(line.trimStart()))) return found('pager');
  if (line.length <= PROMPT_TAIL_CHARS && isYesNo(line)) return found('yes_no');
  if (line.length <= 200 && SECRET_WORD.test(line)) {
    if (SECRET_END.test(line) || SECRET_START.test(line.trimStart())) return found('password');
  }
  if (PRESS_KEY_PATTERNS.some((re) => re.test(line))) return found('press_key');
  if (isRepl(last, before)) return found('repl');
  if (isTextPrompt(last)) return found('text');
  return undefined;
}

/**
 * Classifies the tail of a command's text output: the prompt kind and text when a program seems to be
 * waiting for input, else undefined. Use {@link promptCertainty} (or {@link classifyPromptDetailed}) to
 * tell certain matches from the merely likely `text` kind.
 */
export function classifyPrompt(tail: string): PromptInfo | undefined {
  const detailed = classifyPromptDetailed(tail);
  return detailed === undefined ? undefined : { kind: detailed.kind, text: detailed.text };
}

/** The PromptClassifier API in one object. */
export const PromptClassifier = Object.freeze({
  classify: classifyPrompt,
  classifyDetailed: classifyPromptDetailed,
  certainty: promptCertainty,
  isCertain: isCertainPrompt,
  tailChars: PROMPT_TAIL_CHARS,
});
