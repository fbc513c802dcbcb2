/**
 * The way a container driver runs the host scripts (kill, probe, escaped processes, signal, the connect
 * probe, file removal): a few long-lived `/bin/sh` execs without a terminal that read commands from their
 * stdin, one at a time each. An exec costs the engine a process and a round trip of its own (on Podman a
 * monitor process that lingers for minutes after the exec ends); a script sent to a waiting helper costs
 * a write and a read. Each script runs as `/bin/sh -c SCRIPT conch ARGS… </dev/null`, followed by a line
 * that carries a nonce, the request's number and the exit status, which ends the request's stdout.
 */

import { randomBytes } from 'node:crypto';
import type { Duplex, PassThrough } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { shellQuote } from '@conch/core';

/** The outcome of one script. */
export interface ScriptResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** How a helper's exec is started: a hijacked, demultiplexed stdin/stdout/stderr of `/bin/sh`. */
export type StartHelper = () => Promise<{ stream: Duplex; stdout: PassThrough; stderr: PassThrough }>;

/** Most stderr kept per request (for error messages). */
const MAX_STDERR = 4096;

/** One helper shell (see the module doc). */
export class ScriptHelper {
  private readonly stream: Duplex;
  private readonly nonce = randomBytes(8).toString('hex');
  private readonly decoder = new StringDecoder('utf8');
  private stdout = '';
  private stderr = '';
  private sequence = 0;
  private current:
    | { id: number; resolve: (r: ScriptResult) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
    | undefined;
  private isClosed = false;

  constructor(io: { stream: Duplex; stdout: PassThrough; stderr: PassThrough }) {
    this.stream = io.stream;
    io.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    io.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < MAX_STDERR) this.stderr += chunk.toString('utf8');
    });
    const closed = () => this.onClosed();
    io.stream.on('end', closed);
    io.stream.on('close', closed);
    io.stream.on('error', closed);
  }

  /** True while a script runs. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /** True once the helper's exec is gone (it takes no more scripts). */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Runs one script; rejects when the helper closes first or the script outlives `timeoutMs`. */
  run(script: string, args: readonly string[], timeoutMs: number): Promise<ScriptResult> {
    if (this.isClosed) return Promise.reject(new Error('the helper shell has exited'));
    if (this.current) return Promise.reject(new Error('the helper shell is busy'));
    const id = ++this.sequence;
    this.stdout = '';
    this.stderr = '';
    return new Promise<ScriptResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A script that hangs takes its helper with it: the next script gets a fresh one.
        this.fail(new Error(`a helper script did not finish within ${timeoutMs} ms`));
        this.close();
      }, timeoutMs);
      this.current = { id, resolve, reject, timer };
      const command = `/bin/sh -c ${shellQuote(script)} conch ${args.map(shellQuote).join(' ')} </dev/null\nprintf '\\n%s %s\\n' '${this.nonce}:${id}' "$?"\n`;
      this.stream.write(command, (error) => {
        if (error) this.fail(error);
      });
    });
  }

  private onStdout(chunk: Buffer): void {
    this.stdout += this.decoder.write(chunk);
    const current = this.current;
    if (!current) return;
    const tag = `\n${this.nonce}:${current.id} `;
    const at = this.stdout.indexOf(tag);
    if (at < 0) return;
    const end = this.stdout.indexOf('\n', at + tag.length);
    if (end < 0) return;
    const status = Number(this.stdout.slice(at + tag.length, end));
    const result = { status, stdout: this.stdout.slice(0, at), stderr: this.stderr };
    this.stdout = this.stdout.slice(end + 1);
    clearTimeout(current.timer);
    this.current = undefined;
    current.resolve(result);
  }

  private fail(error: Error): void {
    const current = this.current;
    if (!current) return;
    clearTimeout(current.timer);
    this.current = undefined;
    current.reject(error);
  }

  private onClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.fail(new Error('the helper shell exited'));
  }

  /** Ends the helper: its shell reads end-of-input and exits (after a running script ends). */
  close(): void {
    this.onClosed();
    try {
      this.stream.end();
      this.stream.destroy();
    } catch {
      // already closed
    }
  }
}

/** A waiter for a free helper. */
interface Waiter {
  wake: () => void;
  timer: NodeJS.Timeout;
}

/** A small pool of helper shells (see the module doc). */
export class ScriptHelpers {
  private readonly start: StartHelper;
  private readonly max: number;
  private readonly helpers = new Set<ScriptHelper>();
  private starting = 0;
  private readonly waiters: Waiter[] = [];
  private isClosed = false;

  constructor(start: StartHelper, max = 4) {
    this.start = start;
    this.max = max;
  }

  /**
   * Runs `script` with `args` on a free helper (starting one when all are busy and the pool has room,
   * else waiting up to `waitMs` for one). Resolves with its result whatever its status.
   */
  async run(
    script: string,
    args: readonly string[],
    options: { timeoutMs: number; waitMs: number },
  ): Promise<ScriptResult> {
    const helper = await this.acquire(options.waitMs);
    try {
      return await helper.run(script, args, options.timeoutMs);
    } finally {
      if (helper.closed) this.helpers.delete(helper);
      this.wakeOne();
    }
  }

  private async acquire(waitMs: number): Promise<ScriptHelper> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.isClosed) throw new Error('the container driver is closed');
      for (const helper of this.helpers) {
        if (helper.closed) this.helpers.delete(helper);
        else if (!helper.busy) return helper;
      }
      if (this.helpers.size + this.starting < this.max) {
        this.starting++;
        try {
          const helper = new ScriptHelper(await this.start());
          if (this.isClosed) {
            helper.close();
            throw new Error('the container driver is closed');
          }
          this.helpers.add(helper);
          return helper;
        } finally {
          this.starting--;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('every helper shell is busy');
      await new Promise<void>((resolve) => {
        const waiter: Waiter = {
          wake: () => {
            clearTimeout(waiter.timer);
            resolve();
          },
          timer: setTimeout(() => {
            const at = this.waiters.indexOf(waiter);
            if (at >= 0) this.waiters.splice(at, 1);
            resolve();
          }, left),
        };
        this.waiters.push(waiter);
      });
    }
  }

  private wakeOne(): void {
    this.waiters.shift()?.wake();
  }

  /** Closes every helper; later runs reject. */
  close(): void {
    this.isClosed = true;
    for (const helper of this.helpers) helper.close();
    this.helpers.clear();
    for (const waiter of this.waiters.splice(0)) waiter.wake();
  }
}
