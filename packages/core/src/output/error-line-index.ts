import { RESCUE_LINE_CHARS } from './budget.js';

/** Options for {@link ErrorLineIndex}. */
export interface ErrorLineIndexOptions {
  /** The first this-many error lines are kept forever, with their text and the line before. Default 256. */
  keepFirst?: number;
  /** The numbers of the newest this-many further error lines are kept (text is read back from the log). Default 256. */
  keepLast?: number;
}

/**
 * A small bounded index of the error-looking lines of one log, filled as lines are appended, so the
 * budget can rescue them from the cut middle even after they have left the ring. The first entries keep
 * copies of their text (and of the line before, as context; both cut at {@link RESCUE_LINE_CHARS}), so
 * the first errors of a flood survive even when no spill file holds them; later entries keep only their
 * line number (a rolling window of the newest) and are read back from the ring or the spill.
 */
export class ErrorLineIndex {
  private readonly keepFirst: number;
  private readonly keepLast: number;
  private readonly first: number[] = [];
  private readonly texts = new Map<number, string>();
  private readonly last: number[] = [];
  private lastStart = 0;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  /** Creates an empty index. */
  constructor(options: ErrorLineIndexOptions = {}) {
    this.keepFirst = Math.max(0, options.keepFirst ?? 256);
    this.keepLast = Math.max(0, options.keepLast ?? 256);
  }

  /** Records that line `n` looks like an error; `previous` is line `n - 1` when there is one. */
  add(n: number, text: string, previous: string | undefined): void {
    if (this.first.length < this.keepFirst) {
      this.first.push(n);
      this.texts.set(n, this.copy(text));
      if (previous !== undefined && !this.texts.has(n - 1)) this.texts.set(n - 1, this.copy(previous));
      return;
    }
    if (this.keepLast === 0) return;
    if (this.last.length < this.keepLast) {
      this.last.push(n);
    } else {
      this.last[this.lastStart] = n;
      this.lastStart = (this.lastStart + 1) % this.keepLast;
    }
  }

  /** Ascending numbers of the indexed error lines within `from..to` (inclusive). */
  numbers(from: number, to: number): number[] {
    const out: number[] = [];
    for (const n of this.first) if (n >= from && n <= to) out.push(n);
    const size = this.last.length;
    for (let k = 0; k < size; k++) {
      const n = this.last[(this.lastStart + k) % size] as number;
      if (n >= from && n <= to) out.push(n);
    }
    return out;
  }

  /** The stored copy of line `n` (an early error line or its context line), if any. */
  text(n: number): string | undefined {
    return this.texts.get(n);
  }

  /**
   * A short, independent copy: a slice of a big string would keep the whole string alive, and
   * these copies live as long as the log.
   */
  private copy(text: string): string {
    const cut = text.length > RESCUE_LINE_CHARS ? text.slice(0, RESCUE_LINE_CHARS + 1) : text;
    return this.decoder.decode(this.encoder.encode(cut));
  }
}
