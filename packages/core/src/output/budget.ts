/**
 * The output budget of docs/output.md: a call returns at most `maxChars` characters and at most `maxLines`
 * lines. Over budget it keeps the first ~20% and the last ~80% (of both) at line boundaries, rescues error-looking lines from the cut middle (each
 * with the line before it as context, numbered with absolute line numbers, at most ~25% of the budget),
 * and says exactly what it left out.
 *
 * Everything works on a {@link BudgetSource} that hands out lines on demand, so budgeting 200 MB of new
 * output reads about `maxChars` characters, not 200 MB.
 */

import { hint, NEUTRAL_VOCABULARY, type Vocabulary, verb, wordHint } from '../hint.js';

/**
 * What an error-looking line contains (case-insensitive): `error`, `fail`, `panic`, `traceback`,
 * `exception`, `fatal`, or a `file.ext:LINE:` location such as `src/a.ts:12:` or `foo.py:3:`.
 * Every quantifier is bounded, so a test is linear in the line's length. Not global: `test` is stateless.
 */
export const ERROR_LINE_PATTERN = /error|fail|panic|traceback|exception|fatal|\w\.[a-z0-9]{1,12}:\d{1,9}:/i;

/** Only this many leading characters of a line are examined by {@link looksLikeError}. */
export const ERROR_SCAN_CHARS = 2000;

/**
 * The shortest text {@link ERROR_LINE_PATTERN} can match (`fail`; a location needs at least 6, `a.b:1:`):
 * shorter lines, such as the `y` lines of a flood, skip the regular expression.
 */
export const ERROR_LINE_MIN_CHARS = 4;

/** True when `line` looks like an error (see {@link ERROR_LINE_PATTERN}); examines at most {@link ERROR_SCAN_CHARS}. */
export function looksLikeError(line: string): boolean {
  if (line.length < ERROR_LINE_MIN_CHARS) return false;
  return ERROR_LINE_PATTERN.test(line.length > ERROR_SCAN_CHARS ? line.slice(0, ERROR_SCAN_CHARS) : line);
}

/**
 * Default line cap of a call's output (docs/output.md): a client that keeps only the first 2000 lines of a
 * tool result (OpenCode) still sees the status line, the head, the notice and the rescued error lines.
 */
export const DEFAULT_MAX_OUTPUT_LINES = 1000;

/** Share of the budget kept from the start of the output. */
export const HEAD_SHARE = 0.2;
/** Largest share of the budget that rescued error lines (with their context) may take. */
export const RESCUE_SHARE = 0.25;
/** A rescued line (or its context line) longer than this is cut, with `…` appended. */
export const RESCUE_LINE_CHARS = 500;

/** Lines to budget, read on demand. Line numbers are absolute (0-based) in the text view. */
export interface BudgetSource {
  /** Number of the first line. */
  readonly fromLine: number;
  /** Number of the last line (inclusive); `toLine < fromLine` means no lines. */
  readonly toLine: number;
  /**
   * Returns the lines `from .. from+count-1` (all within the range), in order. An entry is `undefined`
   * when that line is no longer stored anywhere; a shorter array means the missing ones are gone too.
   */
  readLines(from: number, count: number): readonly (string | undefined)[];
  /** Ascending numbers of the error-looking lines within `from..to` (inclusive) that can be rescued. */
  errorLines(from: number, to: number): readonly number[];
}

/** Options for {@link budgetLines}. */
export interface BudgetOptions {
  /**
   * At most this many characters of output (the omission notice comes on top; see {@link budgetLines}).
   * A non-finite value means no limit (everything is materialised: avoid on large sources).
   */
  maxChars: number;
  /**
   * At most this many lines of output (head, rescued lines and tail; the notice comes on top). Default:
   * no line limit. Callers pass the engine's `maxOutputLines` (default {@link DEFAULT_MAX_OUTPUT_LINES}).
   */
  maxLines?: number | undefined;
  /** Path of the full log, named in the notice when known. */
  logPath?: string | undefined;
  /** How the notice names the operation that pages through the log (default: the verbs themselves). */
  vocabulary?: Vocabulary | undefined;
}

/** The budgeted output. */
export interface BudgetResult {
  /** The text to return: head, notice, rescued lines, tail; lines joined with `\n`. */
  text: string;
  /** True when something was left out. */
  truncated: boolean;
  /**
   * Number of lines not shown in full: the notice's range `omittedFrom..omittedTo` (the rescued lines
   * shown from it are counted too; a line cut at the head or tail edge counts as omitted). 0 if none.
   */
  omittedLines: number;
  /** First omitted line (absolute), or -1. */
  omittedFrom: number;
  /** Last omitted line (absolute, inclusive), or -1. */
  omittedTo: number;
  /** Number of error lines rescued from the omitted range (context lines not counted). */
  errorLinesKept: number;
}

/**
 * The omission notice, e.g.
 * `[… 41210 lines omitted (lines 120-41329) of 41450 lines; 3 error lines kept; read_output offset=120 to page through them; full log: PATH]`
 * (the operation that pages, here `read_output`, is the {@link verb} `readOutput` worded with the caller's
 * `vocabulary`: each face names its own).
 * Plain digits, 0-based absolute line numbers, inclusive range; `of N lines` counts the log's lines up to
 * the end of this read (`totalLines`: absolute, like the range); the error lines only when some were
 * kept; `full log` only when a path is known (it is named here and nowhere else in a result); singular
 * nouns for a count of 1 (`1 line omitted (line 7) of 20 lines`, `1 error line kept`).
 */
export function omissionNotice(
  notice: {
    omittedFrom: number;
    omittedTo: number;
    totalLines: number;
    errorLinesKept: number;
    logPath?: string | undefined;
  },
  vocabulary: Vocabulary = NEUTRAL_VOCABULARY,
): string {
  const count = notice.omittedTo - notice.omittedFrom + 1;
  const of = `of ${notice.totalLines} ${notice.totalLines === 1 ? 'line' : 'lines'}`;
  const what =
    count === 1
      ? `1 line omitted (line ${notice.omittedFrom}) ${of}`
      : `${count} lines omitted (lines ${notice.omittedFrom}-${notice.omittedTo}) ${of}`;
  const kept =
    notice.errorLinesKept === 0
      ? ''
      : notice.errorLinesKept === 1
        ? '; 1 error line kept'
        : `; ${notice.errorLinesKept} error lines kept`;
  const path = notice.logPath ? `; full log: ${notice.logPath}` : '';
  const page = wordHint(
    hint`${verb('readOutput')} offset=${notice.omittedFrom} to page through them`,
    vocabulary,
  );
  return `[… ${what}${kept}; ${page}${path}]`;
}

/**
 * Fits the source's lines into `maxChars` characters and `maxLines` lines (docs/output.md budget).
 *
 * Within budget, the lines are returned whole, joined with `\n`. Over budget (either one): up to ~20% of
 * the characters and of the lines from the start
 * (whole lines; the first line cut if no whole line fits), then the notice ({@link omissionNotice}),
 * then the rescued error lines as `N: text` (each preceded by the line before it unless that one is
 * shown already; earliest first, in order, at most ~25% of the budget, each cut at
 * {@link RESCUE_LINE_CHARS}), then the rest of the budget from the end (whole lines; the last line's
 * end if no whole line fits). Lines no longer stored end the head or tail early and fall in the omitted
 * range. The budget counts the characters of the lines, of the rescued lines with their number prefix,
 * and the line breaks between them; the notice itself (about 120 characters plus the path) is not
 * counted, so the text can exceed `maxChars` by that much. Cost is proportional to `maxChars` (plus the
 * number of error candidates), never to the size of the source.
 */
export function budgetLines(source: BudgetSource, options: BudgetOptions): BudgetResult {
  const max = Number.isFinite(options.maxChars)
    ? Math.max(1, Math.floor(options.maxChars))
    : Number.MAX_SAFE_INTEGER;
  const maxLines =
    options.maxLines !== undefined && Number.isFinite(options.maxLines)
      ? Math.max(1, Math.floor(options.maxLines))
      : Number.MAX_SAFE_INTEGER;
  const from = source.fromLine;
  const to = source.toLine;
  const none: BudgetResult = {
    text: '',
    truncated: false,
    omittedLines: 0,
    omittedFrom: -1,
    omittedTo: -1,
    errorLinesKept: 0,
  };
  if (to < from) return none;

  // 1. Forward walk: collect lines while they fit the whole budget.
  const collected: string[] = [];
  let used = 0;
  let overflowLine: string | undefined; // the first line that did not fit (when it exists)
  let fits = true;
  const forward = new LineWalker(source, from, to);
  for (;;) {
    const next = forward.next(max - used);
    if (next === null) break;
    if (next === undefined) {
      fits = false;
      break;
    }
    const cost = next.length + (collected.length > 0 ? 1 : 0);
    if (used + cost > max || collected.length >= maxLines) {
      overflowLine = next;
      fits = false;
      break;
    }
    collected.push(next);
    used += cost;
  }
  if (fits) return { ...none, text: collected.join('\n') };

  // 2. Head: whole lines within ~20% (of the characters and of the lines), or the start of the first line.
  const headBudget = Math.floor(max * HEAD_SHARE);
  const headLines = Math.floor(maxLines * HEAD_SHARE);
  const head: string[] = [];
  let headUsed = 0;
  for (const line of collected) {
    const cost = line.length + 1;
    if (headUsed + cost > headBudget || head.length >= headLines) break;
    head.push(line);
    headUsed += cost;
  }
  let headEnd = from + head.length; // first line not shown in full by the head
  let headPartial = false;
  if (head.length === 0 && headBudget > 1 && headLines >= 1) {
    const first = collected[0] ?? overflowLine;
    if (first !== undefined) {
      head.push(cutEnd(first, headBudget - 1));
      headUsed = headBudget;
      headPartial = true;
      headEnd = from;
    }
  }
  const tailFloor = headEnd + (headPartial ? 1 : 0); // lowest line the tail may show in full

  // 3. Tail: whole lines from the end within the budget left after head and the rescue reserve.
  const rescueCap = Math.floor(max * RESCUE_SHARE);
  const rescueLineCap = Math.floor(maxLines * RESCUE_SHARE);
  const tail = new TailCollector(source, to, tailFloor, headPartial ? headEnd : tailFloor);
  tail.extend(max - headUsed - rescueCap, maxLines - head.length - rescueLineCap, false);

  // 4. Rescue error lines from the hidden middle.
  const middleFrom = tailFloor;
  const middleTo = tail.firstShown - 1;
  const rescued: string[] = [];
  let rescueUsed = 0;
  let errorLinesKept = 0;
  let lastRescued = -1;
  if (middleTo >= middleFrom && rescueCap > 0 && rescueLineCap > 0) {
    for (const n of source.errorLines(middleFrom, middleTo)) {
      if (n < middleFrom || n > middleTo || n <= lastRescued) continue;
      const withContext = n - 1 >= middleFrom && n - 1 > lastRescued;
      const start = withContext ? n - 1 : n;
      const texts = source.readLines(start, n - start + 1);
      const errorText = texts[n - start];
      if (errorText === undefined) continue;
      const entry: string[] = [];
      const contextText = withContext ? texts[0] : undefined;
      if (contextText !== undefined) entry.push(numbered(n - 1, contextText));
      entry.push(numbered(n, errorText));
      const cost = entry.reduce((sum, e) => sum + e.length + 1, 0);
      if (rescueUsed + cost > rescueCap || rescued.length + entry.length > rescueLineCap) break;
      rescued.push(...entry);
      rescueUsed += cost;
      errorLinesKept++;
      lastRescued = n;
    }
  }

  // 5. Give what the rescue did not use back to the tail (never reaching back into rescued lines).
  tail.raiseFloor(lastRescued + 1);
  tail.extend(
    max - headUsed - rescueUsed - tail.used,
    maxLines - head.length - rescued.length - tail.count,
    true,
  );

  const omittedFrom = headEnd;
  const omittedTo = tail.partialLine >= 0 ? tail.partialLine : tail.firstShown - 1;
  const parts = [...head];
  parts.push(
    omissionNotice(
      {
        omittedFrom,
        omittedTo,
        totalLines: to + 1,
        errorLinesKept,
        logPath: options.logPath,
      },
      options.vocabulary,
    ),
  );
  parts.push(...rescued);
  parts.push(...tail.lines());
  return {
    text: parts.join('\n'),
    truncated: true,
    omittedLines: omittedTo - omittedFrom + 1,
    omittedFrom,
    omittedTo,
    errorLinesKept,
  };
}

/** Options for {@link budgetText}. */
export interface BudgetTextOptions extends BudgetOptions {
  /** Absolute number of the text's first line (default 0), used in the notice and rescued lines. */
  firstLine?: number;
}

/**
 * {@link budgetLines} over a string already in memory (lines split at `\n`); error lines are found by
 * scanning the omitted middle with {@link looksLikeError}.
 */
export function budgetText(text: string, options: BudgetTextOptions): BudgetResult {
  const lines = text.split('\n');
  const first = options.firstLine ?? 0;
  const source: BudgetSource = {
    fromLine: first,
    toLine: first + lines.length - 1,
    readLines: (from, count) => lines.slice(from - first, from - first + count),
    errorLines: (a, b) => {
      const found: number[] = [];
      for (let n = a; n <= b; n++) if (looksLikeError(lines[n - first] ?? '')) found.push(n);
      return found;
    },
  };
  return budgetLines(source, options);
}

function numbered(n: number, text: string): string {
  return `${n}: ${text.length > RESCUE_LINE_CHARS ? `${text.slice(0, RESCUE_LINE_CHARS)}…` : text}`;
}

function cutEnd(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(0, chars);
}

/** Reads lines forward in batches sized to the characters still wanted. */
class LineWalker {
  private buffer: readonly (string | undefined)[] = [];
  private index = 0;
  private nextLine: number;

  private averageLength = 0;

  constructor(
    private readonly source: BudgetSource,
    start: number,
    private readonly last: number,
  ) {
    this.nextLine = start;
  }

  /** The next line, `undefined` if it is gone, `null` at the end of the range. */
  next(charsWanted: number): string | undefined | null {
    if (this.index >= this.buffer.length) {
      if (this.nextLine > this.last) return null;
      const count = batchSize(charsWanted, this.averageLength, this.last - this.nextLine + 1);
      this.buffer = this.source.readLines(this.nextLine, count);
      this.index = 0;
      this.nextLine += count;
      if (this.buffer.length < count) {
        // Missing lines at the end of a read are gone.
        this.buffer = [...this.buffer, ...new Array<undefined>(count - this.buffer.length)];
      }
      let chars = 0;
      let lines = 0;
      for (const line of this.buffer) {
        if (line === undefined) continue;
        chars += line.length;
        lines++;
      }
      if (lines > 0) this.averageLength = Math.max(1, chars / lines);
    }
    return this.buffer[this.index++];
  }
}

/** Collects whole lines backwards from the end of the range, extendable in several rounds. */
class TailCollector {
  private readonly reversed: string[] = [];
  /** Characters used, including one line break per line. */
  used = 0;
  /** First line shown in full (last + 1 when none). */
  firstShown: number;
  /** The line whose end is shown when no whole line fitted, or -1. */
  partialLine = -1;
  private partialText = '';
  private stopped = false;
  private averageLength = 0;
  private seenChars = 0;
  private seenLines = 0;

  constructor(
    private readonly source: BudgetSource,
    private readonly last: number,
    private floor: number,
    /** Lowest line whose end may be shown when no whole line fits. */
    private partialFloor: number,
  ) {
    this.firstShown = last + 1;
  }

  /** Stops the tail from reaching below `floor`, for whole lines and for a cut last line. */
  raiseFloor(floor: number): void {
    this.floor = Math.max(this.floor, floor);
    this.partialFloor = Math.max(this.partialFloor, floor);
  }

  /** Lines collected (a cut last line included). */
  get count(): number {
    return this.reversed.length + (this.partialLine >= 0 ? 1 : 0);
  }

  /**
   * Adds more lines from the end while they fit in `budget` more characters and `lineBudget` more lines.
   * With `allowPartial`, when not even the last line fits, the end of that line is taken instead.
   */
  extend(budget: number, lineBudget: number, allowPartial: boolean): void {
    if (this.stopped || this.partialLine >= 0 || lineBudget < 1) return;
    let left = budget;
    let linesLeft = lineBudget;
    walk: while (this.firstShown - 1 >= this.floor && linesLeft > 0) {
      const end = this.firstShown - 1;
      const count = Math.min(linesLeft, batchSize(left, this.averageLength, end - this.floor + 1));
      const start = end - count + 1;
      const batch = this.source.readLines(start, count);
      for (let k = count - 1; k >= 0; k--) {
        const line = batch[k];
        if (line === undefined) {
          this.stopped = true;
          return;
        }
        this.seenChars += line.length;
        this.seenLines++;
        this.averageLength = Math.max(1, this.seenChars / this.seenLines);
        const cost = line.length + 1;
        if (cost > left || linesLeft < 1) break walk;
        this.reversed.push(line);
        this.used += cost;
        left -= cost;
        linesLeft--;
        this.firstShown = start + k;
      }
    }
    if (allowPartial && this.reversed.length === 0 && left > 1 && this.last >= this.partialFloor) {
      const line = this.source.readLines(this.last, 1)[0];
      if (line !== undefined) {
        this.partialLine = this.last;
        this.partialText = line.slice(Math.max(0, line.length - (left - 1)));
        this.used += this.partialText.length + 1;
      }
    }
  }

  /** The collected lines in order (a partial line first). */
  lines(): string[] {
    const out = this.partialLine >= 0 ? [this.partialText] : [];
    for (let k = this.reversed.length - 1; k >= 0; k--) out.push(this.reversed[k] as string);
    return out;
  }
}

/**
 * How many lines to read to get about `charsWanted` characters: at least 1, at most 4096 or what is
 * left; 64 while the line length is unknown (`averageLength` 0).
 */
function batchSize(charsWanted: number, averageLength: number, available: number): number {
  const estimate = averageLength > 0 ? Math.ceil(Math.max(1, charsWanted) / (averageLength + 1)) + 1 : 64;
  return Math.max(1, Math.min(available, 4096, estimate));
}
