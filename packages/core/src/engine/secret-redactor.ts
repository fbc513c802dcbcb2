/**
 * Removes secret input from a terminal's byte stream before anything stores or renders it: a program
 * that echoes what it is typed (or prints it back) must not leak a password into a log, a screen or a
 * result. Occurrences split across chunks are caught: only the longest suffix of a chunk that could
 * begin a secret is held back until the next chunk.
 *
 * A secret is found even when what the terminal shows as the secret has invisible bytes inside it in the
 * stream: escape sequences (`grep --color` highlighting a part of it, `\e[1m`) and overstruck characters
 * (`Q\b`, erased by the backspace before the next character). The whole span, invisible bytes included,
 * is replaced, so the raw log, the spill file, the rendered text and the screen all lose it.
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
    let holdFrom = buf.length;
    for (const secret of this.secrets) holdFrom = Math.min(holdFrom, partialMatchStart(buf, secret));
    if (holdFrom < buf.length) {
      this.held = buf.slice(holdFrom);
      buf = buf.subarray(0, holdFrom);
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

/** Longest span of invisible bytes inside a secret that is still followed (bounds what is held back). */
const MAX_SPAN_EXTRA = 4096;
const ESC = 0x1b;
const BS = 0x08;
const BEL = 0x07;

type Match = { kind: 'match'; end: number } | { kind: 'partial' } | { kind: 'none' };

function replaceAll(buf: Uint8Array, needle: Uint8Array, mask: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== needle[0]) continue;
    const m = matchAt(buf, i, needle);
    if (m.kind !== 'match') continue;
    parts.push(buf.subarray(start, i), mask);
    start = m.end;
    i = m.end - 1;
  }
  if (parts.length === 0) return buf;
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

/** Index of the earliest byte from which the end of `buf` could be the start of `needle` (else length). */
function partialMatchStart(buf: Uint8Array, needle: Uint8Array): number {
  const from = Math.max(0, buf.length - needle.length * 4 - MAX_SPAN_EXTRA);
  for (let i = from; i < buf.length; i++) {
    if (buf[i] !== needle[0]) continue;
    if (matchAt(buf, i, needle).kind === 'partial') return i;
  }
  return buf.length;
}

/**
 * Matches `needle` at `start`, skipping invisible bytes between its characters: escape sequences and a
 * character erased by a following backspace. `partial` when `buf` ends before the match is decided.
 */
function matchAt(buf: Uint8Array, start: number, needle: Uint8Array): Match {
  let j = start;
  let k = 0;
  while (k < needle.length) {
    if (j - start > needle.length + MAX_SPAN_EXTRA) return { kind: 'none' };
    if (j >= buf.length) return { kind: 'partial' };
    const b = buf[j]!;
    if (b === ESC) {
      const end = escapeEnd(buf, j);
      if (end === -1) return { kind: 'partial' };
      j = end;
      continue;
    }
    if (b === BS) {
      j++;
      continue;
    }
    const charLen = utf8Length(b);
    if (j + charLen > buf.length) return { kind: 'partial' };
    const next = buf[j + charLen];
    // A character erased by a backspace is invisible, unless it is the secret's last one.
    if (next === BS && !(k + charLen === needle.length && matches(buf, j, needle, k))) {
      j += charLen + 1;
      continue;
    }
    // Whether a mismatching character is erased is decided by the next byte.
    if (next === undefined && b !== needle[k]) return { kind: 'partial' };
    if (b !== needle[k]) return { kind: 'none' };
    j++;
    k++;
  }
  return { kind: 'match', end: j };
}

function matches(buf: Uint8Array, j: number, needle: Uint8Array, k: number): boolean {
  for (let n = 0; k + n < needle.length; n++) if (buf[j + n] !== needle[k + n]) return false;
  return true;
}

/** End (exclusive) of the escape sequence at `i`, or -1 when `buf` ends inside it. */
function escapeEnd(buf: Uint8Array, i: number): number {
  const kind = buf[i + 1];
  if (kind === undefined) return -1;
  if (kind === 0x5b) {
    // CSI: parameters and intermediates, then a final byte 0x40-0x7e.
    for (let j = i + 2; j < buf.length; j++) {
      const c = buf[j]!;
      if (c >= 0x40 && c <= 0x7e) return j + 1;
      if (c < 0x20 || c > 0x3f) return j;
    }
    return -1;
  }
  if (kind === 0x5d || kind === 0x50 || kind === 0x5f || kind === 0x5e) {
    // OSC, DCS, APC, PM: up to BEL or ESC \.
    for (let j = i + 2; j < buf.length; j++) {
      if (buf[j] === BEL) return j + 1;
      if (buf[j] === ESC) return buf[j + 1] === undefined ? -1 : j + (buf[j + 1] === 0x5c ? 2 : 0);
    }
    return -1;
  }
  if (kind >= 0x20 && kind <= 0x2f) return buf[i + 2] === undefined ? -1 : i + 3;
  return i + 2;
}

function utf8Length(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
