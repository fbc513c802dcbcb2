import type { SpillSink, SpillStore } from '../driver.js';

/** Options for {@link MemorySpill}. */
export interface MemorySpillOptions {
  /** Stop storing once this many lines are stored (default: no limit). */
  maxLines?: number;
  /** Stop storing once the stored lines (plus one per line break) would pass this many characters (default: no limit). */
  maxChars?: number;
  /** The `path` to report, as if there were a file (default: undefined). */
  path?: string;
}

/**
 * An in-memory {@link SpillSink} for tests and for hosts without a file system. Like the file-backed
 * one, it stores lines from line 0 until its cap is reached and then silently stores nothing more.
 */
export class MemorySpill implements SpillSink {
  /** The stored lines (line n at index n). */
  readonly lines: string[] = [];
  /** Number of `appendLines` calls received (to observe batching). */
  appendCalls = 0;
  /** True after `close`. */
  closed = false;
  /** True after `close(true)`. */
  removed = false;
  private chars = 0;
  private full = false;
  private readonly maxLines: number;
  private readonly maxChars: number;
  private readonly spillPath: string | undefined;

  /** Creates an empty spill. */
  constructor(options: MemorySpillOptions = {}) {
    this.maxLines = options.maxLines ?? Number.POSITIVE_INFINITY;
    this.maxChars = options.maxChars ?? Number.POSITIVE_INFINITY;
    this.spillPath = options.path;
  }

  /** Number of lines stored, from line 0. */
  get storedLines(): number {
    return this.lines.length;
  }

  /** The path given at construction. */
  get path(): string | undefined {
    return this.spillPath;
  }

  /** Stores lines in order until the cap; after the first line that does not fit, stores nothing. */
  appendLines(lines: readonly string[]): void {
    this.appendCalls++;
    if (this.closed) return;
    for (const line of lines) {
      if (this.full) return;
      const cost = line.length + 1;
      if (this.lines.length >= this.maxLines || this.chars + cost > this.maxChars) {
        this.full = true;
        return;
      }
      this.lines.push(line);
      this.chars += cost;
    }
  }

  /** Up to `count` stored lines from absolute line `from`. */
  readLines(from: number, count: number): string[] {
    if (this.removed || count <= 0 || from < 0) return [];
    return this.lines.slice(from, from + count);
  }

  /** Marks the spill closed; `remove` also forgets the lines. */
  close(remove: boolean): void {
    this.closed = true;
    if (remove) {
      this.removed = true;
      this.lines.length = 0;
    }
  }
}

/** A {@link SpillStore} creating {@link MemorySpill}s with the same options; remembers each one by command id. */
export class MemorySpillStore implements SpillStore {
  /** The spills created, by command id. */
  readonly spills = new Map<string, MemorySpill>();

  /** `options.path` may contain `{id}`, replaced by the command id. */
  constructor(private readonly options: MemorySpillOptions = {}) {}

  /** Creates (and remembers) the spill of one command. */
  create(commandId: string): MemorySpill {
    const path = this.options.path?.replace('{id}', commandId);
    const spill = new MemorySpill({ ...this.options, ...(path !== undefined ? { path } : {}) });
    this.spills.set(commandId, spill);
    return spill;
  }
}
