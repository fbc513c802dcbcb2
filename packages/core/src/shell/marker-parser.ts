/**
 * The stream parser for shell-integration markers: splits a terminal's byte stream into output bytes and
 * markers, even when a marker is split across chunks at any byte. Only markers carrying this session's
 * nonce count; anything else (another nonce, a truncated marker) passes through as output.
 */

import { MARKER_OSC } from './shell-integration.js';

/** A marker reported by the session shell or an isolated-command wrapper. */
export type ShellMarker =
  | { type: 'ready'; cwd: string }
  | { type: 'start'; commandId: string }
  | { type: 'end'; commandId: string; status: number | null; cwd: string }
  /** The environment snapshot after `end`: `written` when its file is whole (status 0). */
  | { type: 'snapshot'; commandId: string; written: boolean }
  | { type: 'prompt' };

/** One piece of a parsed stream, in order. */
export type StreamPiece = { type: 'data'; bytes: Uint8Array } | { type: 'marker'; marker: ShellMarker };

const ESC = 0x1b;
const BEL = 0x07;
const MAX_MARKER_BYTES = 16 * 1024;

/** Splits a byte stream into data and markers (see the module doc). */
export class MarkerParser {
  private readonly prefix: Uint8Array;
  /** Bytes held back because they may be the start of a marker. */
  private pending: Uint8Array = new Uint8Array(0);

  constructor(nonce: string) {
    this.prefix = new TextEncoder().encode(`\x1b]${MARKER_OSC};${nonce};`);
  }

  /** Parses the next chunk; returns the pieces it completes. */
  push(chunk: Uint8Array): StreamPiece[] {
    const buf = this.pending.length === 0 ? chunk : concat(this.pending, chunk);
    this.pending = new Uint8Array(0);
    const pieces: StreamPiece[] = [];
    let dataStart = 0;
    let i = buf.indexOf(ESC);
    while (i !== -1) {
      const match = this.matchPrefix(buf, i);
      if (match === 'no') {
        i = buf.indexOf(ESC, i + 1);
        continue;
      }
      if (match === 'partial') break;
      // Full prefix: look for the terminating BEL.
      const bodyStart = i + this.prefix.length;
      const end = buf.indexOf(BEL, bodyStart);
      if (end === -1) {
        if (buf.length - i > MAX_MARKER_BYTES) {
          i = buf.indexOf(ESC, i + 1);
          continue;
        }
        break;
      }
      const marker = parseBody(new TextDecoder().decode(buf.subarray(bodyStart, end)));
      if (marker === undefined) {
        i = buf.indexOf(ESC, end);
        continue;
      }
      if (i > dataStart) pieces.push({ type: 'data', bytes: buf.slice(dataStart, i) });
      pieces.push({ type: 'marker', marker });
      dataStart = end + 1;
      i = buf.indexOf(ESC, dataStart);
    }
    const holdFrom = i === -1 ? buf.length : i;
    if (holdFrom > dataStart) pieces.push({ type: 'data', bytes: buf.slice(dataStart, holdFrom) });
    if (holdFrom < buf.length) this.pending = buf.slice(holdFrom);
    return pieces;
  }

  /** Returns whatever is held back (call when the stream ends). */
  flush(): StreamPiece[] {
    const rest = this.pending;
    this.pending = new Uint8Array(0);
    return rest.length > 0 ? [{ type: 'data', bytes: rest }] : [];
  }

  private matchPrefix(buf: Uint8Array, at: number): 'yes' | 'no' | 'partial' {
    const n = Math.min(this.prefix.length, buf.length - at);
    for (let k = 0; k < n; k++) if (buf[at + k] !== this.prefix[k]) return 'no';
    return n === this.prefix.length ? 'yes' : 'partial';
  }
}

function parseBody(body: string): ShellMarker | undefined {
  if (body === 'P') return { type: 'prompt' };
  const kind = body[0];
  if (body[1] !== ';') return undefined;
  const rest = body.slice(2);
  if (kind === 'R') return { type: 'ready', cwd: rest };
  if (kind === 'S') return /^[A-Za-z0-9_]+$/.test(rest) ? { type: 'start', commandId: rest } : undefined;
  if (kind === 'D') {
    const m = /^([A-Za-z0-9_]+);(\d+)$/.exec(rest);
    return m ? { type: 'snapshot', commandId: m[1]!, written: m[2] === '0' } : undefined;
  }
  if (kind === 'E') {
    const m = /^([A-Za-z0-9_]+);(-?\d*);(.*)$/s.exec(rest);
    if (!m) return undefined;
    const status = m[2] === '' ? null : Number(m[2]);
    return { type: 'end', commandId: m[1]!, status, cwd: m[3]! };
  }
  return undefined;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
