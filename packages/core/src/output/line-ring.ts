import type { SpillSink } from '../driver.js';

/** Options for {@link LineRing}. */
export interface LineRingOptions {
  /** Cap on retained characters (each line counts its length plus one for its line break). */
  capChars: number;
  /** A block is sealed once it holds this many characters (default 64 Ki). */
  blockChars?: number;
  /** A block is sealed once it holds this many lines (default 4096). */
  blockLines?: number;
  /** Receives every line, in order, before it can leave the ring. */
  spill?: SpillSink | undefined;
}

/** A sealed run of consecutive lines stored as one flat string plus end offsets. */
interface Block {
  readonly first: number;
  readonly text: string;
  /**
   * End offset (exclusive) of each line in `text`; lines are separated by one `\n`. Two bytes per line when
   * the block's text fits (the usual case, blocks being sealed at 64 Ki characters), else four: in a
   * flood of short lines the offsets would otherwise take twice the memory of the text itself.
   */
  readonly ends: Uint16Array | Uint32Array;
  readonly charge: number;
}

/** Input volume after which an open block is sealed, whatever it holds (see {@link LineRing.noteInput}). */
const SEAL_AFTER_INPUT = 1024 * 1024;

/**
 * The in-memory text lines of one log: an append-only sequence with absolute (0-based) line numbers,
 * of which only the newest lines are kept. Lines gather in an open block; a full block is sealed into
 * one flat string (4 bytes of offset per line) and older sealed blocks are evicted once the retained
 * characters pass the cap. So memory stays under `capChars` plus one open block. Every line is handed
 * to the spill sink (if any) no later than when its block is sealed, so a line is always in the ring,
 * in the spill, or dropped (counted by the owner).
 */
export class LineRing {
  private readonly capChars: number;
  private readonly blockChars: number;
  private readonly blockLines: number;
  private readonly spill: SpillSink | undefined;

  private blocks: Block[] = [];
  private head = 0;
  private sealedCharge = 0;
  private open: string[] = [];
  private openFirst = 0;
  private openChars = 0;
  private inputSinceSeal = 0;
  /** Absolute number of lines handed to the spill. */
  private spilled = 0;

  /** Creates an empty ring. */
  constructor(options: LineRingOptions) {
    this.capChars = Math.max(1, options.capChars);
    this.blockChars = Math.max(1, options.blockChars ?? 64 * 1024);
    this.blockLines = Math.max(1, options.blockLines ?? 4096);
    this.spill = options.spill;
  }

  /** Absolute number of the oldest line still in the ring (equals {@link endLine} when empty). */
  get firstLine(): number {
    return this.blocks[this.head]?.first ?? this.openFirst;
  }

  /** Number of lines ever pushed (absolute number of the next line). */
  get endLine(): number {
    return this.openFirst + this.open.length;
  }

  /** Characters retained (lines plus one per line break), the quantity capped by `capChars`. */
  get retainedChars(): number {
    return this.sealedCharge + this.openChars;
  }

  /** Appends one completed line. */
  push(line: string): void {
    this.open.push(line);
    this.openChars += line.length + 1;
    if (this.openChars >= this.blockChars || this.open.length >= this.blockLines) this.seal();
  }

  /**
   * Tells the ring how much input produced the lines since the last seal. Lines may share memory with
   * the input chunks they came from; sealing after about 1 MiB of input copies them into a flat block
   * so that no more than that much input stays referenced.
   */
  noteInput(amount: number): void {
    this.inputSinceSeal += amount;
    if (this.inputSinceSeal >= SEAL_AFTER_INPUT && this.open.length > 0) this.seal();
  }

  /** Hands every line not yet handed to the spill sink. */
  flushSpill(): void {
    if (!this.spill) return;
    const end = this.endLine;
    if (this.spilled >= end) return;
    this.spill.appendLines(this.open.slice(this.spilled - this.openFirst));
    this.spilled = end;
  }

  /** Seals the open block (handing its lines to the spill) and evicts old blocks past the cap. */
  seal(): void {
    this.inputSinceSeal = 0;
    const count = this.open.length;
    if (count === 0) return;
    this.flushSpill();
    const text = this.open.join('\n');
    const ends = text.length <= 0xffff ? new Uint16Array(count) : new Uint32Array(count);
    let offset = 0;
    for (let k = 0; k < count; k++) {
      offset += (this.open[k] as string).length;
      ends[k] = offset;
      offset += 1;
    }
    const block: Block = { first: this.openFirst, text, ends, charge: text.length + 1 };
    this.blocks.push(block);
    this.sealedCharge += block.charge;
    this.openFirst += count;
    this.open = [];
    this.openChars = 0;
    this.evict();
  }

  /** Returns line `n` if it is still in the ring. */
  get(n: number): string | undefined {
    if (n >= this.openFirst) return this.open[n - this.openFirst];
    const block = this.findBlock(n);
    return block ? lineOf(block, n - block.first) : undefined;
  }

  /**
   * Copies the lines `from .. to-1` that are in the ring into `out` at `out[n - offset]`; lines outside
   * the ring are left as they are.
   */
  readInto(from: number, to: number, out: (string | undefined)[], offset: number): void {
    let n = Math.max(from, this.firstLine);
    const end = Math.min(to, this.endLine);
    while (n < end && n < this.openFirst) {
      const block = this.findBlock(n);
      if (!block) return;
      const stop = Math.min(end, block.first + block.ends.length);
      for (; n < stop; n++) out[n - offset] = lineOf(block, n - block.first);
    }
    for (; n < end; n++) out[n - offset] = this.open[n - this.openFirst];
  }

  private findBlock(n: number): Block | undefined {
    let lo = this.head;
    let hi = this.blocks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const block = this.blocks[mid] as Block;
      if (n < block.first) hi = mid - 1;
      else if (n >= block.first + block.ends.length) lo = mid + 1;
      else return block;
    }
    return undefined;
  }

  private evict(): void {
    while (this.head < this.blocks.length && this.sealedCharge + this.openChars > this.capChars) {
      const block = this.blocks[this.head] as Block;
      this.blocks[this.head] = undefined as unknown as Block;
      this.head++;
      this.sealedCharge -= block.charge;
    }
    if (this.head > 64 && this.head * 2 > this.blocks.length) {
      this.blocks = this.blocks.slice(this.head);
      this.head = 0;
    }
  }
}

function lineOf(block: Block, index: number): string | undefined {
  const end = block.ends[index];
  if (end === undefined) return undefined;
  const start = index === 0 ? 0 : (block.ends[index - 1] as number) + 1;
  return block.text.slice(start, end);
}
