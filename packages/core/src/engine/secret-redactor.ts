/**
 * Removes secret input from a terminal's byte stream before anything stores or renders it: a program
 * that echoes what it is typed (or prints it back) must not leak a password into a log, a screen or a
 * result. Occurrences split across chunks are caught: only the longest suffix of a chunk that could
 * begin a secret is held back until the next chunk.
 */

const MASK = new TextEncoder().encode('[secret]');

/** Byte-level secret masking for one stream (see the module doc). */
export class SecretRedactor {
  private secrets: Uint8Array[] = [];
  private held: Uint8Array = new Uint8Array(0);

  /** Starts masking `secret` (ignored when shorter than 3 bytes: too short to mask without garbling). */
  add(secret: string): void {
    const bytes = new TextEncoder().encode(secret.replace(/[\r\n]+$/, ''));
    if (bytes.length >= 3) this.secrets.push(bytes);
  }

  /** True when no secret is being masked. */
  get idle(): boolean {
    return this.secrets.length === 0;
  }

  /** Forgets every secret (the command ended); returns any held bytes. */
  clear(): Uint8Array {
    this.secrets = [];
    return this.flush();
  }

  /** Processes a chunk; returns the bytes safe to pass on. */
  push(chunk: Uint8Array): Uint8Array {
    if (this.secrets.length === 0 && this.held.length === 0) return chunk;
    let buf = this.held.length === 0 ? chunk : concat(this.held, chunk);
    this.held = new Uint8Array(0);
    for (const secret of this.secrets) buf = replaceAll(buf, secret, MASK);
    let hold = 0;
    for (const secret of this.secrets) hold = Math.max(hold, longestPrefixSuffix(buf, secret));
    if (hold > 0) {
      this.held = buf.slice(buf.length - hold);
      buf = buf.subarray(0, buf.length - hold);
    }
    return buf;
  }

  /** Returns held bytes (the stream ended). */
  flush(): Uint8Array {
    const out = this.held;
    this.held = new Uint8Array(0);
    return out;
  }
}

function replaceAll(buf: Uint8Array, needle: Uint8Array, mask: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let start = 0;
  let i = indexOfBytes(buf, needle, 0);
  if (i === -1) return buf;
  while (i !== -1) {
    parts.push(buf.subarray(start, i), mask);
    start = i + needle.length;
    i = indexOfBytes(buf, needle, start);
  }
  parts.push(buf.subarray(start));
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function indexOfBytes(buf: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0]!;
  for (
    let i = buf.indexOf(first, from);
    i !== -1 && i + needle.length <= buf.length;
    i = buf.indexOf(first, i + 1)
  ) {
    let k = 1;
    while (k < needle.length && buf[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

/** Length of the longest suffix of `buf` that is a proper prefix of `needle`. */
function longestPrefixSuffix(buf: Uint8Array, needle: Uint8Array): number {
  const max = Math.min(needle.length - 1, buf.length);
  for (let len = max; len > 0; len--) {
    let ok = true;
    for (let k = 0; k < len; k++) {
      if (buf[buf.length - len + k] !== needle[k]) {
        ok = false;
        break;
      }
    }
    if (ok) return len;
  }
  return 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
