import type { SpillSink } from '../driver.js';
import type { TextPattern } from '../engine/user-pattern.js';
import type { Vocabulary } from '../hint.js';
import type { OutputInfo, PageInfo } from '../types.js';
import { type BudgetSource, budgetLines, DEFAULT_MAX_OUTPUT_LINES, looksLikeError } from './budget.js';
import { ByteRing } from './byte-ring.js';
import { ErrorLineIndex } from './error-line-index.js';
import { LineRing } from './line-ring.js';
import { DEFAULT_MAX_LINE_CHARS, TextRenderer } from './text-renderer.js';

/** Default cap of the in-memory text ring, in characters (docs/output.md: 8 MiB). */
export const DEFAULT_RING_CHARS = 8 * 1024 * 1024;
/** Default size of the in-memory raw ring, in bytes (1 MiB). */
export const DEFAULT_RAW_RING_BYTES = 1024 * 1024;
/** Default `maxChars` of {@link OutputLog.readSince} and {@link OutputLog.page} (docs/tools.md `max_output_chars`). */
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
/** Default number of lines of a page (docs/output.md `length`). */
export const DEFAULT_PAGE_LINES = 1000;
/** A page filter is tested against at most this many leading characters of each line. */
export const FILTER_LINE_CHARS = 2000;
/** A filtered page examines at most this many lines by default; the page says where it stopped. */
export const DEFAULT_FILTER_SCAN_LINES = 200_000;

/**
 * A read position in a log's text view, returned by {@link OutputLog.cursor} and
 * {@link OutputLog.readSince}. Treat it as opaque: only a log creates meaningful cursors, and a cursor
 * belongs to the log that created it. It is a small immutable value; keeping many is cheap.
 */
export interface OutputCursor {
  /** Absolute number of the line the reader is in. */
  readonly line: number;
  /** Characters of that line already returned (it was the partial line then). */
  readonly offset: number;
  /** The renderer's rewrite counter when those characters were returned. */
  readonly rewrites: number;
}

/** Options for {@link OutputLog}. */
export interface OutputLogOptions {
  /** Cap of the text ring, in characters (each line plus one for its line break). Default 8 MiB. */
  ringChars?: number;
  /** Size of the raw ring, in bytes. Default 1 MiB. */
  rawRingBytes?: number;
  /** Where every completed line also goes (a private spill file); lines are handed in batches. */
  spill?: SpillSink | undefined;
  /** Lines longer than this are split (default 1 Mi characters). */
  maxLineChars?: number;
  /** Size of a ring block in characters (default 64 Ki): the granularity of eviction. Mostly for tests. */
  blockChars?: number;
}

/** Options for {@link OutputLog.readSince}. */
export interface ReadSinceOptions {
  /** Budget of the returned text (see `budgetLines`). Default {@link DEFAULT_MAX_OUTPUT_CHARS}. */
  maxChars?: number;
  /** Most lines of the returned text (see `budgetLines`). Default {@link DEFAULT_MAX_OUTPUT_LINES}. */
  maxLines?: number;
  /** How the omission notice names the paging operation (the calling face's words; see `budgetLines`). */
  vocabulary?: Vocabulary | undefined;
}

/** What {@link OutputLog.readSince} returns. */
export interface ReadSinceResult {
  /** The new text, budgeted; lines joined with `\n`, no trailing line break. */
  text: string;
  /** The cursor to pass next time (after everything up to now, including what the budget omitted). */
  next: OutputCursor;
  /** True when the budget left something out. */
  truncated: boolean;
  /** Lines not shown in full (the notice's range); 0 when not truncated. */
  omittedLines: number;
  /** Error lines rescued from the omitted range. */
  errorLinesKept: number;
  /** First line covered by this read (absolute, 0-based). */
  fromLine: number;
  /** Last line covered (inclusive); `fromLine - 1` when nothing is new. */
  toLine: number;
}

/** Options for {@link OutputLog.page}. */
export interface PageOptions {
  /** ≥ 0: absolute 0-based line number of the first line; < 0: the last `|offset|` lines. */
  offset: number;
  /** At most this many lines (matching lines with a filter). Default 1000. */
  length?: number;
  /** Keep only lines matching this (tested per line on its first {@link FILTER_LINE_CHARS} characters). */
  filter?: TextPattern | undefined;
  /** Stop before the page's text passes this many characters (the first line is cut to fit). Default 30000. */
  maxChars?: number;
  /** With a filter, examine at most this many lines. Default {@link DEFAULT_FILTER_SCAN_LINES}. */
  maxScanLines?: number;
}

/** One line of a page. */
export interface PageLine {
  /** Absolute 0-based line number. */
  n: number;
  /** The line's text (cut when it alone passed `maxChars`). */
  text: string;
}

/** What {@link OutputLog.page} returns. */
export interface OutputPage {
  /** The lines returned, in order. */
  lines: PageLine[];
  /** The lines rendered: joined with `\n`, each as `N: text` when a filter was given. */
  text: string;
  /** The docs/output.md header, e.g. `[lines 500-549 of 5000, 4450 remaining]` (see {@link OutputLog.page}). */
  header: string;
  /** The `page` object of the result. */
  info: PageInfo;
}

/** What {@link OutputLog.rawSince} and {@link OutputLog.rawTail} return. */
export interface RawRead {
  /** The bytes as UTF-8 text, escape sequences kept (invalid bytes as U+FFFD). */
  text: string;
  /** Absolute offset of the first byte returned. */
  fromByte: number;
  /** Absolute offset after the last byte returned: the byte cursor for the next {@link OutputLog.rawSince}. */
  next: number;
  /** Bytes between the requested position and `fromByte` that are no longer kept (0 if none). */
  droppedBytes: number;
  /** `[… N earlier bytes are no longer kept]` when bytes were dropped, else empty. */
  note: string;
}

/** Lines a page reads in its first batch; each next batch doubles, up to {@link MAX_PAGE_BATCH}. */
const FIRST_PAGE_BATCH = 8;
/** Most lines a page reads at once. */
const MAX_PAGE_BATCH = 1024;

/** How many recently completed lines remember their rewrite counter (for partly returned lines). */
const REMEMBERED_COMPLETIONS = 16;

/**
 * One command's output: an append-only log with absolute positions (docs/output.md). Bytes go in through
 * {@link append}; the text view (rendered by a {@link TextRenderer}) is kept as lines in a bounded ring
 * and handed to an optional spill sink; the raw bytes are kept in a separate bounded ring; error-looking
 * lines are indexed as they arrive. Line numbers are absolute and 0-based; the partial (unfinished)
 * line, when not empty, is the last line of the text view.
 *
 * Reads never consume anything: {@link readSince} takes and returns a cursor, {@link page} uses none.
 * Every read costs in proportion to what it returns, not to the size of the log.
 */
export class OutputLog {
  private readonly renderer: TextRenderer;
  private readonly ring: LineRing;
  private readonly raw: ByteRing;
  private readonly errors = new ErrorLineIndex();
  private readonly spill: SpillSink | undefined;
  private bytes = 0;
  private previousLine: string | undefined;
  private ended = false;
  /** The line a cursor points into with an offset, if it is still the partial line. */
  private watchedLine = -1;
  /** Rewrite counter at completion of recently watched lines. */
  private readonly completions = new Map<number, number>();

  /** Creates an empty log. */
  constructor(options: OutputLogOptions = {}) {
    this.spill = options.spill;
    this.ring = new LineRing({
      capChars: options.ringChars ?? DEFAULT_RING_CHARS,
      spill: options.spill,
      ...(options.blockChars !== undefined ? { blockChars: options.blockChars } : {}),
    });
    this.raw = new ByteRing(options.rawRingBytes ?? DEFAULT_RAW_RING_BYTES);
    this.renderer = new TextRenderer({
      onLine: (line) => this.onLine(line),
      maxLineChars: options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS,
    });
  }

  /** Bytes appended so far. */
  get bytesTotal(): number {
    return this.bytes;
  }

  /** Lines of the text view: completed lines, plus 1 when the partial line is not empty. */
  get linesTotal(): number {
    return this.ring.endLine + (this.renderer.partialLine.length > 0 ? 1 : 0);
  }

  /** Completed lines (the partial line excluded). */
  get completedLines(): number {
    return this.ring.endLine;
  }

  /** Completed lines that are in neither the ring nor the spill (gone for good). */
  get droppedLines(): number {
    return Math.max(0, this.ring.firstLine - (this.spill?.storedLines ?? 0));
  }

  /** Characters retained by the text ring (capped by `ringChars`, plus one block being filled). */
  get retainedChars(): number {
    return this.ring.retainedChars;
  }

  /** Path of the spill file, when there is one. */
  get spillPath(): string | undefined {
    return this.spill?.path;
  }

  /** True after {@link finish}. */
  get finished(): boolean {
    return this.ended;
  }

  /** DECCKM application-cursor mode as last set by the output (for the key map). */
  get applicationCursor(): boolean {
    return this.renderer.applicationCursor;
  }

  /** True while the output has switched to the alternate screen. */
  get altScreen(): boolean {
    return this.renderer.altScreen;
  }

  /** Grows at every cursor-addressed move below the first row (see TextRenderer.cursorAddressing). */
  get cursorAddressing(): number {
    return this.renderer.cursorAddressing;
  }

  /** Grows at every absolute cursor move and whole-display erase (see TextRenderer.redraws). */
  get redraws(): number {
    return this.renderer.redraws;
  }

  /** Grows at every erase of the whole display (see TextRenderer.displayErases). */
  get displayErases(): number {
    return this.renderer.displayErases;
  }

  /** Appends a chunk of terminal output. */
  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.bytes += chunk.length;
    this.raw.push(chunk);
    this.renderer.write(chunk);
    this.ring.noteInput(chunk.length);
  }

  /**
   * Marks the end of the output: flushes the UTF-8 decoder, turns a non-empty partial line into a
   * completed line, and hands every line to the spill. Idempotent; output appended later (there should
   * be none) still goes in.
   */
  finish(): void {
    this.renderer.end();
    this.renderer.completeLine();
    this.ring.seal();
    this.ended = true;
  }

  /** Closes the spill sink (`removeSpill` also deletes it). The in-memory log stays readable. */
  close(removeSpill = false): void {
    this.spill?.close(removeSpill);
  }

  /** Hands every completed line not yet handed to the spill sink (reads do this too). */
  flushSpill(): void {
    this.ring.flushSpill();
  }

  /** A cursor at the very beginning of the log. */
  cursorAtStart(): OutputCursor {
    return { line: 0, offset: 0, rewrites: 0 };
  }

  /** A cursor after everything so far (the partial line included). On a fresh log, the beginning. */
  cursor(): OutputCursor {
    const partial = this.renderer.partialLine;
    if (partial.length > 0) this.watch(this.ring.endLine);
    return { line: this.ring.endLine, offset: partial.length, rewrites: this.renderer.rewrites };
  }

  /**
   * The text that arrived since `cursor`, budgeted (see `budgetLines`): the rest of the cursor's line,
   * the completed lines after it, and the current partial line. A line that was returned while partial
   * continues with only its new part if it merely grew; if it was rewritten since (CR, backspace,
   * erase), it is returned whole again. Lines are joined with `\n` without a trailing one, so text
   * that begins with `\n` means the previously returned partial line has ended. `next` points after
   * everything up to now (including anything the budget omitted, which stays reachable by {@link page}).
   * Cost is proportional to `maxChars`: the head is read from the spill when it has left the ring, the
   * tail from the ring, rescued errors through the error index.
   */
  readSince(cursor: OutputCursor, options: ReadSinceOptions = {}): ReadSinceResult {
    this.ring.flushSpill();
    const completed = this.ring.endLine;
    const partial = this.renderer.partialLine;
    const rewrites = this.renderer.rewrites;
    const line = Math.min(Math.max(0, cursor.line), completed);
    let skip = 0;
    if (cursor.offset > 0 && line === cursor.line) {
      const unchanged =
        line === completed ? rewrites === cursor.rewrites : this.completions.get(line) === cursor.rewrites;
      if (unchanged) skip = cursor.offset;
    }
    const last = partial.length > 0 ? completed : completed - 1;
    const next: OutputCursor = { line: completed, offset: partial.length, rewrites };
    if (partial.length > 0) this.watch(completed);
    const nothing = line > last || (line === completed && skip >= partial.length);
    if (nothing) {
      const keep = line === completed && partial.length === 0 ? { ...cursor, line } : next;
      return {
        text: '',
        next: keep,
        truncated: false,
        omittedLines: 0,
        errorLinesKept: 0,
        fromLine: line,
        toLine: line - 1,
      };
    }
    const source: BudgetSource = {
      fromLine: line,
      toLine: last,
      readLines: (from, count) => {
        const lines = this.readRange(from, count, true);
        if (skip > 0 && from === line) {
          const first = lines[0];
          if (first !== undefined) lines[0] = first.slice(skip);
        }
        return lines;
      },
      errorLines: (from, to) => this.errors.numbers(from, to),
    };
    const budget = budgetLines(source, {
      maxChars: options.maxChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      maxLines: options.maxLines ?? DEFAULT_MAX_OUTPUT_LINES,
      logPath: this.spill?.path,
      vocabulary: options.vocabulary,
    });
    return {
      text: budget.text,
      next,
      truncated: budget.truncated,
      omittedLines: budget.omittedLines,
      errorLinesKept: budget.errorLinesKept,
      fromLine: line,
      toLine: last,
    };
  }

  /**
   * A page of the text view (docs/output.md `read_output` with `offset`); moves no cursor.
   *
   * Numbering is absolute and 0-based everywhere, as for `offset`. `offset ≥ 0` starts at that line;
   * `offset < 0` starts `|offset|` lines before the end. A start inside lines that are gone (dropped from
   * both ring and spill) moves to the first stored line after them, and the header says so. The page
   * then takes up to `length` lines (matching lines with a filter; each then rendered `N: text`), and
   * stops early at lines that are gone, or before passing `maxChars` characters.
   *
   * `info.from_line` is the first line examined and `info.to_line` the last line examined, inclusive
   * (with a filter, lines between them that did not match are not returned); an empty page has
   * `to_line = from_line - 1`. `remaining_lines = total_lines - (to_line + 1)`, so the next page starts
   * at `offset = to_line + 1`. `dropped_lines` counts every line gone from the whole log.
   * `header` is `[lines 500-549 of 5000, 4450 remaining]`, extended with `; N lines match the filter`,
   * `; lines A-B are no longer stored` and `; line N cut at C of L characters` when those apply; an empty
   * page reads `[no lines at 5000 of 5000, 0 remaining]`.
   */
  page(options: PageOptions): OutputPage {
    const total = this.linesTotal;
    const length = Math.max(0, whole(options.length, DEFAULT_PAGE_LINES));
    const maxChars = Math.max(1, whole(options.maxChars, DEFAULT_MAX_OUTPUT_CHARS));
    const offset = whole(options.offset, 0);
    const filter = options.filter;
    const maxScan = Math.max(1, whole(options.maxScanLines, DEFAULT_FILTER_SCAN_LINES));
    const notes: string[] = [];

    let start = offset >= 0 ? Math.min(offset, total) : Math.max(0, total + offset);
    const stored = this.spill?.storedLines ?? 0;
    const ringFirst = this.ring.firstLine;
    const gapFrom = Math.min(stored, ringFirst);
    if (start >= gapFrom && start < ringFirst) {
      notes.push(`lines ${start}-${ringFirst - 1} are no longer stored`);
      start = ringFirst;
    }

    const lines: PageLine[] = [];
    let chars = 0;
    let n = start;
    let scanned = 0;
    let matches = 0;
    let done = length === 0;
    // Batches grow from a few lines: lines can be 1 Mi characters each, and reading (from the spill) far
    // more of them than the character budget lets through would cost memory in proportion to the log.
    let batchLines = FIRST_PAGE_BATCH;
    while (!done && n < total) {
      if (n >= gapFrom && n < ringFirst) {
        notes.push(`lines ${gapFrom}-${ringFirst - 1} are no longer stored`);
        break;
      }
      const stop = n < gapFrom ? Math.min(total, gapFrom) : total;
      const want = filter ? batchLines : Math.min(batchLines, length - lines.length);
      batchLines = Math.min(MAX_PAGE_BATCH, batchLines * 2);
      const batch = this.readRange(n, Math.min(want, stop - n), false);
      for (const text of batch) {
        if (text === undefined) {
          done = true;
          break;
        }
        if (filter) {
          if (scanned >= maxScan) {
            done = true;
            break;
          }
          scanned++;
          if (!filter.test(text.length > FILTER_LINE_CHARS ? text.slice(0, FILTER_LINE_CHARS) : text)) {
            n++;
            continue;
          }
        }
        const prefix = filter ? `${n}: `.length : 0;
        const cost = prefix + text.length + (lines.length > 0 ? 1 : 0);
        if (chars + cost > maxChars) {
          if (lines.length > 0) {
            done = true;
            break;
          }
          const keep = Math.max(0, maxChars - prefix);
          notes.push(`line ${n} cut at ${keep} of ${text.length} characters`);
          lines.push({ n, text: text.slice(0, keep) });
          matches++;
          n++;
          done = true;
          break;
        }
        lines.push({ n, text });
        chars += cost;
        matches++;
        n++;
        if (lines.length >= length) {
          done = true;
          break;
        }
      }
    }

    const toLine = n - 1;
    const remaining = Math.max(0, total - n);
    if (filter) notes.unshift(`${matches} ${matches === 1 ? 'line matches' : 'lines match'} the filter`);
    const range =
      toLine >= start ? `lines ${start}-${toLine} of ${total}` : `no lines at ${start} of ${total}`;
    const header = `[${range}, ${remaining} remaining${notes.map((note) => `; ${note}`).join('')}]`;
    const text = lines.map((l) => (filter ? `${l.n}: ${l.text}` : l.text)).join('\n');
    return {
      lines,
      text,
      header,
      info: {
        from_line: start,
        to_line: toLine,
        total_lines: total,
        remaining_lines: remaining,
        dropped_lines: this.droppedLines,
      },
    };
  }

  /**
   * The raw bytes from absolute byte offset `byteCursor` (0 = the beginning) that are still in the raw
   * ring, decoded as UTF-8 with escape sequences kept. A partial UTF-8 character at the end is held
   * back for the next call (`next` stops before it); at a cut start, stray continuation bytes are skipped.
   */
  rawSince(byteCursor: number): RawRead {
    return this.rawFrom(Math.max(0, whole(byteCursor, 0)));
  }

  /** The last `maxBytes` bytes of raw output still kept (see {@link rawSince}). */
  rawTail(maxBytes: number): RawRead {
    const read = this.rawFrom(Math.max(0, this.raw.end - Math.max(0, whole(maxBytes, 0))));
    // A tail is not a continuation: report only what the ring itself has lost.
    const dropped = this.raw.start;
    return { ...read, droppedBytes: dropped, note: dropped > 0 ? droppedNote(dropped) : '' };
  }

  /**
   * The last `maxChars` characters of the text view, the partial line included. Completed lines end
   * with `\n`, so a tail ending in `\n` means the partial line is empty. Reads only the ring.
   */
  tail(maxChars: number): string {
    const want = Math.max(0, whole(maxChars, 0));
    if (want === 0) return '';
    const partial = this.renderer.partialLine;
    const parts: string[] = [partial.length > want ? partial.slice(partial.length - want) : partial];
    let chars = parts[0]?.length ?? 0;
    const first = this.ring.firstLine;
    for (let n = this.ring.endLine - 1; n >= first && chars < want; n--) {
      const line = this.ring.get(n);
      if (line === undefined) break;
      const need = want - chars;
      const piece =
        line.length + 1 > need ? `${line.slice(Math.max(0, line.length + 1 - need))}\n` : `${line}\n`;
      parts.push(piece);
      chars += piece.length;
    }
    parts.reverse();
    const text = parts.join('');
    return text.length > want ? text.slice(text.length - want) : text;
  }

  /**
   * The newest non-empty line (the partial line if it has text, else the newest completed line in the
   * ring that is not blank), without trailing whitespace, cut to its last `maxChars` characters
   * (default 500). Empty when there is none among the newest 64 lines. For progress messages.
   */
  lastLine(maxChars = 500): string {
    const clip = (s: string) => (s.length > maxChars ? s.slice(s.length - maxChars) : s);
    const partial = this.renderer.partialLine.trimEnd();
    if (partial.length > 0) return clip(partial);
    const end = this.ring.endLine;
    const stop = Math.max(this.ring.firstLine, end - 64);
    for (let n = end - 1; n >= stop; n--) {
      const line = this.ring.get(n)?.trimEnd();
      if (line) return clip(line);
    }
    return '';
  }

  /** The `output_info` of a result, given what the read reported. */
  outputInfo(read?: { truncated: boolean; omittedLines: number }): OutputInfo {
    const info: OutputInfo = {
      bytes_total: this.bytes,
      lines_total: this.linesTotal,
      truncated: read?.truncated ?? false,
      omitted_lines: read?.omittedLines ?? 0,
    };
    const path = this.spill?.path;
    if (path !== undefined) info.log_path = path;
    return info;
  }

  private onLine(line: string): void {
    const n = this.ring.endLine;
    if (n === this.watchedLine) {
      this.completions.set(n, this.renderer.rewrites);
      if (this.completions.size > REMEMBERED_COMPLETIONS) {
        const oldest = this.completions.keys().next().value;
        if (oldest !== undefined) this.completions.delete(oldest);
      }
    }
    if (looksLikeError(line)) this.errors.add(n, line, this.previousLine);
    this.previousLine = line;
    this.ring.push(line);
  }

  private watch(line: number): void {
    this.watchedLine = line;
  }

  /**
   * Lines `from .. from+count-1` from the ring, the spill or (the partial line); `useIndex` also fills
   * gaps with the error index's stored copies. Missing lines are `undefined`.
   */
  private readRange(from: number, count: number, useIndex: boolean): (string | undefined)[] {
    const out = new Array<string | undefined>(Math.max(0, count)).fill(undefined);
    if (count <= 0) return out;
    const to = from + count;
    const ringFirst = this.ring.firstLine;
    if (this.spill && from < ringFirst) {
      const end = Math.min(to, ringFirst, this.spill.storedLines);
      if (end > from) {
        const got = this.spill.readLines(from, end - from);
        for (let k = 0; k < got.length && k < end - from; k++) out[k] = got[k];
      }
    }
    this.ring.readInto(from, to, out, from);
    const completed = this.ring.endLine;
    if (completed >= from && completed < to) {
      const partial = this.renderer.partialLine;
      if (partial.length > 0) out[completed - from] = partial;
    }
    if (useIndex) {
      for (let k = 0; k < count; k++) if (out[k] === undefined) out[k] = this.errors.text(from + k);
    }
    return out;
  }

  private rawFrom(from: number): RawRead {
    const start = this.raw.start;
    let bytes = this.raw.read(from);
    let fromByte = Math.min(Math.max(from, start), this.raw.end);
    let skipped = 0;
    while (skipped < 3 && skipped < bytes.length && ((bytes[skipped] as number) & 0xc0) === 0x80) skipped++;
    if (skipped > 0 && fromByte > 0) {
      bytes = bytes.subarray(skipped);
      fromByte += skipped;
    }
    const hold = incompleteTail(bytes);
    const body = hold > 0 ? bytes.subarray(0, bytes.length - hold) : bytes;
    const dropped = Math.max(0, start - from);
    return {
      text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(body),
      fromByte,
      next: fromByte + body.length,
      droppedBytes: dropped,
      note: dropped > 0 ? droppedNote(dropped) : '',
    };
  }
}

/** `value` truncated to a whole number; `fallback` when it is missing or not finite (infinities too). */
function whole(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.trunc(value) : fallback;
}

function droppedNote(bytes: number): string {
  return `[… ${bytes} earlier bytes are no longer kept]`;
}

/** Number of bytes at the end of `bytes` that start a UTF-8 character not yet complete. */
function incompleteTail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back] as number;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
