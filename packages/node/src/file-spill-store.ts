/**
 * FileSpillStore: the core's `SpillStore` on the local file system. One file per command in a private
 * directory (mode 0700), files mode 0600, written synchronously in batches, with a sparse line index so
 * that reading any page of a huge log is fast.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SpillSink, SpillStore } from '@conch/core';
import { markInstanceDir, unmarkInstanceDir } from './server-instance.js';

/** Default cap of one command's spill file: 256 MiB (docs/output.md). */
export const DEFAULT_SPILL_CAP_BYTES = 256 * 1024 * 1024;

/** Every how many lines the sparse index records a byte offset. */
export const SPILL_INDEX_INTERVAL = 256;

const DEFAULT_FLUSH_BYTES = 64 * 1024;
const READ_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** Options for {@link FileSpillStore}. */
export interface FileSpillStoreOptions {
  /**
   * Directory for the spill files, used for nothing else. Created (mode 0700) if missing; an existing one
   * must be a real directory owned by this user and is chmod-ed to 0700. Default: a new
   * `conch-XXXXXX` directory under `os.tmpdir()`.
   */
  dir?: string;
  /** Maximum bytes stored per command; lines past it are not stored. Default {@link DEFAULT_SPILL_CAP_BYTES}. */
  maxBytesPerCommand?: number;
  /** Bytes buffered in memory before a write to the file. Default 64 KiB. */
  flushBytes?: number;
}

/**
 * One command's spill file. Lines are appended in order, each followed by `\n` (a `\n` inside a line is
 * stored as `␤` so line numbers stay exact). Storing stops silently at the cap (or on a write error);
 * {@link storedLines} says how many lines from line 0 are kept.
 *
 * The file is created lazily, when more than `flushBytes` have been appended: most commands print little,
 * and their lines stay in this small buffer (and in the command's in-memory ring) without touching the
 * disk. {@link path} is undefined until the file exists.
 */
export class FileSpillSink implements SpillSink {
  readonly #create: () => { path: string; fd: number };
  #path: string | undefined;
  readonly #capBytes: number;
  readonly #flushBytes: number;
  readonly #onClose: (sink: FileSpillSink) => void;
  /** @internal Set by the store: forgets the sink once its file is removed. */
  #onRemove: ((sink: FileSpillSink) => void) | undefined;
  #fd: number | undefined;
  /** Bytes in the file. */
  #fileBytes = 0;
  /** Text waiting to be written, in chunks of whole lines each ending with `\n`; its lines and bytes. */
  #pending: string[] = [];
  #pendingLines = 0;
  #pendingBytes = 0;
  #storedLines = 0;
  /** Byte offset of line `k * SPILL_INDEX_INTERVAL` at position k. */
  readonly #index: number[] = [];
  #full = false;
  #closed = false;
  #removed = false;

  /** @internal Created by {@link FileSpillStore.create}. */
  constructor(
    create: () => { path: string; fd: number },
    capBytes: number,
    flushBytes: number,
    onClose: (s: FileSpillSink) => void,
  ) {
    this.#create = create;
    this.#capBytes = capBytes;
    this.#flushBytes = flushBytes;
    this.#onClose = onClose;
  }

  /** Absolute path of the spill file (undefined before it is created and once it has been removed). */
  get path(): string | undefined {
    return this.#removed ? undefined : this.#path;
  }

  /** Number of lines stored, from line 0. */
  get storedLines(): number {
    return this.#storedLines;
  }

  /** Bytes stored (including buffered bytes not yet written). */
  get storedBytes(): number {
    return this.#fileBytes + this.#pendingBytes;
  }

  /** True once the cap (or a write error) stopped storing. */
  get full(): boolean {
    return this.#full;
  }

  /** Appends complete lines (without their newline). Past the cap, nothing more is stored. */
  appendLines(lines: readonly string[]): void {
    if (this.#closed || this.#full || lines.length === 0) return;
    if (!this.#appendAscii(lines)) this.#appendEach(lines);
    if (this.#pendingBytes >= this.#flushBytes) this.#flush();
  }

  /**
   * The batch as one chunk, when it is all ASCII (a line's size in bytes is then its length plus one),
   * has no line break inside a line and fits under the cap: a flood of short lines costs one join and
   * one byte count per batch instead of a byte count per line. False (nothing stored) otherwise.
   */
  #appendAscii(lines: readonly string[]): boolean {
    const text = `${lines.join('\n')}\n`;
    const start = this.#fileBytes + this.#pendingBytes;
    if (start + text.length > this.#capBytes || Buffer.byteLength(text, 'utf8') !== text.length) return false;
    const marks: number[] = [];
    let offset = start;
    let n = this.#storedLines;
    for (const line of lines) {
      if (line.includes('\n')) return false;
      if (n % SPILL_INDEX_INTERVAL === 0) marks.push(offset);
      offset += line.length + 1;
      n++;
    }
    for (const mark of marks) this.#index.push(mark);
    this.#pending.push(text);
    this.#pendingLines += lines.length;
    this.#pendingBytes += text.length;
    this.#storedLines = n;
    return true;
  }

  /** Line by line, for text that is not all ASCII or reaches the cap. */
  #appendEach(lines: readonly string[]): void {
    for (let line of lines) {
      if (line.includes('\n')) line = line.replaceAll('\n', '\u2424');
      const size = Buffer.byteLength(line, 'utf8') + 1;
      const offset = this.#fileBytes + this.#pendingBytes;
      if (offset + size > this.#capBytes) {
        this.#full = true;
        break;
      }
      if (this.#storedLines % SPILL_INDEX_INTERVAL === 0) this.#index.push(offset);
      this.#pending.push(`${line}\n`);
      this.#pendingLines++;
      this.#pendingBytes += size;
      this.#storedLines++;
      if (this.#pendingBytes >= this.#flushBytes) this.#flush();
    }
  }

  /** Writes buffered lines to the file. On a write error, the unwritten lines are forgotten and storing stops. */
  #flush(force = false): void {
    if (this.#pending.length === 0) return;
    if (this.#path === undefined) {
      // Create the file now, unless the sink is closed: then the few buffered lines stay in memory
      // (unless the store is asked to keep every log on disk).
      if (this.#closed && !force) return;
      try {
        const file = this.#create();
        this.#path = file.path;
        this.#fd = file.fd;
      } catch {
        this.#full = true;
        this.#dropUnwritten(this.#pendingLines);
        this.#pending = [];
        this.#pendingLines = 0;
        this.#pendingBytes = 0;
        return;
      }
    }
    if (this.#fd === undefined) return;
    const buffer = Buffer.from(
      this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join(''),
      'utf8',
    );
    const lines = this.#pendingLines;
    this.#pending = [];
    this.#pendingLines = 0;
    this.#pendingBytes = 0;
    let written = 0;
    try {
      while (written < buffer.length) {
        written += writeSync(this.#fd, buffer, written, buffer.length - written, this.#fileBytes + written);
      }
      this.#fileBytes += buffer.length;
    } catch {
      // Disk full or similar: keep what is complete in the file, forget the rest, stop storing.
      this.#full = true;
      this.#dropUnwritten(lines);
    }
  }

  /** After a failed write of `lines` lines: rolls the counters back to what the file holds. */
  #dropUnwritten(lines: number): void {
    this.#storedLines -= lines;
    while (this.#index.length > 0 && this.#index[this.#index.length - 1]! >= this.#fileBytes)
      this.#index.pop();
  }

  /** Reads up to `count` stored lines starting at absolute line `from` (0-based). */
  readLines(from: number, count: number): string[] {
    if (this.#removed) return [];
    const start = Math.max(0, Math.trunc(from));
    const wanted = Math.min(Math.trunc(count), this.#storedLines - start);
    if (!(wanted > 0)) return [];
    this.#flush();
    // Never written to a file: everything stored is in the buffer.
    if (this.#path === undefined)
      return this.#pending
        .join('')
        .split('\n')
        .slice(start, start + wanted);
    const block = Math.floor(start / SPILL_INDEX_INTERVAL);
    let skip = start - block * SPILL_INDEX_INTERVAL;
    let position = this.#index[block] ?? 0;
    const end = this.#fileBytes;
    let fd = this.#fd;
    const ownFd = fd === undefined;
    if (fd === undefined) fd = openSync(this.#path as string, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const out: string[] = [];
      let parts: Buffer[] = []; // the start of a line that continues in the next chunk
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      while (out.length < wanted && position < end) {
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, end - position), position);
        if (n <= 0) break;
        position += n;
        const data = chunk.subarray(0, n);
        let lineStart = 0;
        while (out.length < wanted) {
          const nl = data.indexOf(NEWLINE, lineStart);
          if (nl < 0) {
            if (skip === 0) parts.push(Buffer.from(data.subarray(lineStart)));
            break;
          }
          if (skip > 0) skip--;
          else if (parts.length === 0) out.push(data.toString('utf8', lineStart, nl));
          else {
            parts.push(data.subarray(lineStart, nl));
            out.push(Buffer.concat(parts).toString('utf8'));
          }
          parts = [];
          lineStart = nl + 1;
        }
      }
      return out;
    } finally {
      if (ownFd) closeSync(fd);
    }
  }

  /** Writes every stored line to the file, creating it even for a small log (used to keep logs). */
  persist(): void {
    this.#flush(true);
    if (this.#closed && this.#fd !== undefined) {
      try {
        closeSync(this.#fd);
      } catch {
        // already closed
      }
      this.#fd = undefined;
    }
  }

  /** @internal */
  set onRemove(listener: (sink: FileSpillSink) => void) {
    this.#onRemove = listener;
  }

  /** Writes buffered lines and closes the file; `remove` also deletes it. Calling it twice is harmless. */
  close(remove: boolean): void {
    if (!this.#closed) {
      // A file that exists gets the rest; a small log never written stays in the buffer.
      if (this.#path !== undefined) this.#flush();
      this.#closed = true;
      if (this.#fd !== undefined) {
        try {
          closeSync(this.#fd);
        } catch {
          // already closed
        }
        this.#fd = undefined;
      }
      this.#onClose(this);
    }
    if (remove && !this.#removed) {
      this.#removed = true;
      this.#pending = [];
      this.#pendingLines = 0;
      this.#pendingBytes = 0;
      if (this.#path !== undefined) {
        try {
          unlinkSync(this.#path);
        } catch {
          // missing already
        }
      }
      this.#onRemove?.(this);
    }
  }
}

function clampPositive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

/**
 * The core's {@link SpillStore} on the local disk: a private directory (0700) holding one spill file
 * (0600) per command. Call {@link dispose} at shutdown to close every file and remove the directory.
 */
export class FileSpillStore implements SpillStore {
  /** Absolute path of the private directory. */
  readonly dir: string;
  readonly #capBytes: number;
  readonly #flushBytes: number;
  readonly #createdDir: boolean;
  readonly #open = new Set<FileSpillSink>();
  readonly #all = new Set<FileSpillSink>();
  readonly #names = new Set<string>();
  #disposed = false;

  constructor(options: FileSpillStoreOptions = {}) {
    this.#capBytes = clampPositive(options.maxBytesPerCommand, DEFAULT_SPILL_CAP_BYTES);
    this.#flushBytes = clampPositive(options.flushBytes, DEFAULT_FLUSH_BYTES);
    if (options.dir === undefined) {
      this.dir = mkdtempSync(join(tmpdir(), 'conch-'));
      this.#createdDir = true;
    } else {
      this.dir = resolve(options.dir);
      this.#createdDir = mkdirSync(this.dir, { recursive: true, mode: 0o700 }) !== undefined;
      const stat = lstatSync(this.dir);
      if (!stat.isDirectory()) throw new Error(`Spill directory ${this.dir} is not a directory`);
      const uid = process.getuid?.();
      if (uid !== undefined && stat.uid !== uid) {
        throw new Error(`Spill directory ${this.dir} is owned by another user (uid ${stat.uid})`);
      }
    }
    chmodSync(this.dir, 0o700);
    // A directory this store created is removed by a later start once this server is gone.
    if (this.#createdDir) markInstanceDir(this.dir);
  }

  /**
   * The spill sink of one command. Its file, `<commandId>.log` (made unique if needed), is created when
   * the command's output outgrows the sink's buffer.
   */
  create(commandId: string): FileSpillSink {
    if (this.#disposed) throw new Error('FileSpillStore is disposed');
    const base = commandId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100) || 'command';
    const createFile = (): { path: string; fd: number } => {
      if (this.#disposed) throw new Error('FileSpillStore is disposed');
      let name = `${base}.log`;
      for (let i = 2; this.#names.has(name); i++) name = `${base}-${i}.log`;
      let path = join(this.dir, name);
      let fd: number | undefined;
      const flags = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      for (let i = 2; fd === undefined; i++) {
        try {
          fd = openSync(path, flags, 0o600);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || i > 1000) throw error;
          name = `${base}-${i}.log`;
          path = join(this.dir, name);
        }
      }
      fchmodSync(fd, 0o600);
      this.#names.add(name);
      return { path, fd };
    };
    const sink = new FileSpillSink(createFile, this.#capBytes, this.#flushBytes, (s) => this.#open.delete(s));
    sink.onRemove = (s) => this.#all.delete(s);
    this.#open.add(sink);
    this.#all.add(sink);
    return sink;
  }

  /**
   * Closes every open spill file. With `removeFiles` (the default) also deletes them, and the directory
   * when this store created it. Calling it twice is harmless.
   */
  dispose(removeFiles = true): void {
    if (!removeFiles && !this.#disposed) {
      for (const sink of this.#all) sink.persist();
      // Kept on purpose: no later start may remove it.
      if (this.#createdDir) unmarkInstanceDir(this.dir);
    }
    this.#disposed = true;
    for (const sink of [...this.#open]) sink.close(removeFiles);
    if (!removeFiles) return;
    for (const sink of this.#all) sink.close(true);
    this.#all.clear();
    if (this.#createdDir) rmSync(this.dir, { recursive: true, force: true });
  }
}
