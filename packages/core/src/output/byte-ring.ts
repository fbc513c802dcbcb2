/** Initial size of a ring's buffer. */
const INITIAL_BYTES = 4096;

/**
 * The newest bytes of a stream in a fixed-size circular buffer, addressed by absolute byte offsets
 * (0 = the first byte ever pushed). Used for the "raw" view.
 */
export class ByteRing {
  /** Grows by doubling up to `capacity`, so a command with little output costs little memory. */
  private buffer: Uint8Array;
  private readonly capacity: number;
  private total = 0;

  /** Creates a ring keeping the last `capacity` bytes (at least 1). */
  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity));
    this.buffer = new Uint8Array(Math.min(this.capacity, INITIAL_BYTES));
  }

  /** Number of bytes ever pushed (absolute offset of the next byte). */
  get end(): number {
    return this.total;
  }

  /** Absolute offset of the oldest byte still kept. */
  get start(): number {
    return Math.max(0, this.total - this.buffer.length);
  }

  /** Appends bytes; only the last `capacity` bytes of a huge chunk are kept. */
  push(chunk: Uint8Array): void {
    this.grow(this.total + chunk.length);
    const cap = this.buffer.length;
    const data = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
    let pos = (this.total + (chunk.length - data.length)) % cap;
    let offset = 0;
    while (offset < data.length) {
      const n = Math.min(cap - pos, data.length - offset);
      this.buffer.set(data.subarray(offset, offset + n), pos);
      offset += n;
      pos = (pos + n) % cap;
    }
    this.total += chunk.length;
  }

  /**
   * Makes room for `needed` bytes in total, up to the capacity. Growth happens only before the ring first
   * wraps (while every byte ever pushed is still kept, in order from index 0), so a plain copy suffices.
   */
  private grow(needed: number): void {
    if (needed <= this.buffer.length || this.buffer.length >= this.capacity) return;
    let size = this.buffer.length;
    while (size < needed && size < this.capacity) size *= 2;
    const next = new Uint8Array(Math.min(size, this.capacity));
    next.set(this.buffer.subarray(0, this.total));
    this.buffer = next;
  }

  /** Copies the kept bytes from absolute offset `from` (clamped to what is kept) to the end. */
  read(from: number): Uint8Array {
    const start = Math.min(Math.max(from, this.start), this.total);
    const length = this.total - start;
    const out = new Uint8Array(length);
    const cap = this.buffer.length;
    let pos = start % cap;
    let offset = 0;
    while (offset < length) {
      const n = Math.min(cap - pos, length - offset);
      out.set(this.buffer.subarray(pos, pos + n), offset);
      offset += n;
      pos = (pos + n) % cap;
    }
    return out;
  }
}
