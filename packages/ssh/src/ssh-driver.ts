/**
 * The SSH driver: the core's `Driver` over authenticated ssh2 connections to one host.
 *
 * Every terminal (session shell, isolated or background command) is its own exec channel with a PTY;
 * sshd makes each one a session and process-group leader, so a command's tree is the channel's session
 * plus whatever carries its `CONCH_COMMAND_ID` marker. Private files live in a `mktemp -d` directory
 * (0700) on the remote host, written through short exec channels.
 *
 * Channels beyond the server's per-connection limit (OpenSSH `MaxSessions`, 10 by default) go to extra
 * connections to the same host, which must present the same host key and authenticate with the method
 * that worked first (see `connectSsh`). When the primary connection dies, every live channel ends as
 * `lost` and `onLost` listeners fire.
 */

import { randomBytes } from 'node:crypto';
import {
  ConchError,
  type Disposable,
  type Driver,
  ErrorCode,
  hint,
  type OpenShellOptions,
  type SpawnOptions,
  shellQuote,
  type TerminalProcess,
  verb,
} from '@conch/core';
import {
  assertEnvNames,
  defaultShellOf,
  type HostScriptPurpose,
  HostScripts,
  isPrivateFilePath,
  LostSignal,
  normalizeSignal,
  type ProcessFactsKind,
  privateFilePath,
  shCommand,
  startFailure,
  startupScript,
} from '@conch/core/host';
import type { Client, ClientChannel, PseudoTtyOptions } from 'ssh2';
import { type ChannelHost, SshChannelProcess } from './channel-process.js';

/** The result of {@link SshDriver.exec}. */
export interface SshExecResult {
  stdout: string;
  stderr: string;
  /** Exit status; null when the command ended by a signal or the channel closed without one. */
  exitCode: number | null;
  /** Signal name (`SIGTERM`) when a signal ended the command. */
  signal: string | null;
}

/** What the connect step hands the driver. Internal to the package (built by `connectSsh`). */
export interface SshDriverInit {
  client: Client;
  host: string;
  hostName: string;
  port: number;
  username: string;
  /** The remote private 0700 directory. */
  privateDir: string;
  /** The remote login shell (from getent/$SHELL), possibly empty. */
  loginShell: string;
  /** Path of bash on the remote host, or empty. */
  bashPath: string;
  /** How the remote host's process facts are read (the connect probe's finding). */
  processFacts: ProcessFactsKind;
  /** Opens another authenticated connection to the same host (same host key); undefined when impossible. */
  reconnect: (() => Promise<Client>) | undefined;
  /** Why extra connections are impossible (for the LIMIT_REACHED message). */
  reconnectUnavailableReason?: string;
  /** Clients this connection depends on (ProxyJump hops), closed with the driver. */
  dependencies: Client[];
  /** How long an extra connection may sit without channels before it is closed (ms). */
  extraIdleMs?: number;
}

/** One connection of the pool. */
interface Link {
  client: Client;
  primary: boolean;
  /** Channels open or being opened. */
  channels: number;
  /** A channel open failed at the current count (the server's per-connection limit). */
  full: boolean;
  closed: boolean;
  idleTimer: NodeJS.Timeout | undefined;
  procs: Set<SshChannelProcess>;
  /** The last error the client reported (e.g. a keepalive timeout), for the lost reason. */
  lastError?: string;
  /** When a channel of this connection last closed (`Date.now()`). */
  lastClosedAt?: number;
}

/** Most connections one driver opens to its host. */
const MAX_LINKS = 16;
/** How long a terminal channel may take to report its start. */
const START_TIMEOUT_MS = 20_000;
/**
 * How soon after a channel closed a refused open is tried once more on the same connection (50 ms later):
 * the client sees the close before the server has released the slot (OpenSSH counts it against MaxSessions
 * a moment longer).
 */
const SLOT_RELEASE_GRACE_MS = 1000;
/** How long utility channels wait for a free slot by default when no extra connection can be opened. */
const UTILITY_WAIT_MS = 10_000;
/**
 * How long each host script waits for a free channel slot: a kill waits longest; a probe not at all (a
 * probe that cannot run now has no evidence, which is an answer too).
 */
const SCRIPT_SLOT_WAIT_MS: Readonly<Record<HostScriptPurpose, number>> = {
  kill: 2000,
  escaped: 1000,
  probe: 0,
  signal: 1000,
};

/** Options of {@link SshDriver.exec}. */
export interface SshExecOptions {
  /** Sent to the command's stdin, which is then closed. */
  stdin?: string;
  /** Rejects (closing the channel) when the command has not finished after this long (default 30 s). */
  timeoutMs?: number;
  /**
   * When every connection is at the server's channel limit and no extra connection can be opened, how
   * long to wait for a channel to free up before failing with LIMIT_REACHED (default 10 s).
   */
  slotWaitMs?: number;
}

function isChannelOpenFailure(error: unknown): boolean {
  const e = error as { reason?: unknown; message?: unknown } | null;
  return (
    !!e &&
    (typeof e.reason === 'number' ||
      (typeof e.message === 'string' && e.message.includes('Channel open failure')))
  );
}

function execOn(client: Client, command: string, pty: PseudoTtyOptions | undefined): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      const callback = (error: Error | undefined, channel: ClientChannel) => {
        if (error) {
          reject(error);
          return;
        }
        keepEarlyExit(channel);
        resolve(channel);
      };
      if (pty) client.exec(command, { pty }, callback);
      else client.exec(command, callback);
    } catch (error) {
      reject(error);
    }
  });
}

/**
 * A fast command's exit status can arrive in the same packet batch as the exec confirmation: ssh2 emits
 * 'exit' synchronously while parsing it, before the caller (resumed on a later tick) listens, and the
 * status would be lost (the command would look `lost`). This callback runs synchronously on the
 * confirmation, so it records an early exit and hands it to the first 'exit' listener added later.
 * ('data' is buffered by the stream and 'close' follows the stream's end, so neither is lost.)
 */
function keepEarlyExit(channel: ClientChannel): void {
  let early: unknown[] | undefined;
  const record = (...args: unknown[]) => {
    early = args;
  };
  const onNewListener = (event: string | symbol, listener: (...args: unknown[]) => void) => {
    if (event !== 'exit') return;
    channel.off('newListener', onNewListener);
    channel.off('exit', record);
    if (early) listener(...early);
  };
  channel.on('exit', record);
  channel.on('newListener', onNewListener);
}

/**
 * The SSH driver (see the module doc). Created by `connectSsh`; one per session is the usual use,
 * since closing an SSH session disposes its driver.
 */
export class SshDriver implements Driver {
  readonly specificationVersion = 1 as const;
  readonly kind = 'ssh' as const;
  /** The host as asked for (possibly a config alias). */
  readonly host: string;
  /** The address connected to (HostName). */
  readonly hostName: string;
  readonly port: number;
  readonly username: string;
  /** The remote private 0700 directory holding init scripts and long commands. */
  readonly privateDir: string;
  /** The host scripts (kill, probe, escaped processes, signal), reading the host's process facts. */
  readonly scripts: HostScripts;
  private readonly loginShell: string;
  private readonly bashPath: string;
  private readonly nonce = randomBytes(8).toString('hex');
  private readonly links: Link[] = [];
  private reconnect: (() => Promise<Client>) | undefined;
  private readonly reconnectUnavailableReason: string | undefined;
  private readonly dependencies: Client[];
  private readonly extraIdleMs: number;
  private adding: Promise<void> | undefined;
  private readonly lostSignal = new LostSignal();
  private readonly freeWaiters = new Set<() => void>();
  private closing = false;
  private disposed = false;
  private disposing: Promise<void> | undefined;
  private readonly closedClients = new WeakSet<Client>();

  /** @internal Use `connectSsh`. */
  constructor(init: SshDriverInit) {
    this.host = init.host;
    this.hostName = init.hostName;
    this.port = init.port;
    this.username = init.username;
    this.privateDir = init.privateDir;
    this.loginShell = init.loginShell;
    this.bashPath = init.bashPath;
    this.scripts = new HostScripts(
      (script, args, call) =>
        this.runScript(script, args, {
          timeoutMs: call.timeoutMs,
          slotWaitMs: SCRIPT_SLOT_WAIT_MS[call.purpose],
        }),
      init.processFacts,
    );
    this.reconnect = init.reconnect;
    this.reconnectUnavailableReason = init.reconnectUnavailableReason;
    this.dependencies = init.dependencies;
    this.extraIdleMs = init.extraIdleMs ?? 15_000;
    for (const dep of this.dependencies) dep.once('close', () => this.closedClients.add(dep));
    this.addLink(init.client, true);
  }

  /** True once the connection is gone (the driver can no longer run anything). */
  get lost(): boolean {
    return this.lostSignal.lost;
  }

  /** Why the connection was lost, once it was. */
  get lostBecause(): string | undefined {
    return this.lostSignal.reason;
  }

  /** Number of open connections (the primary plus extras opened past the channel limit). */
  connectionCount(): number {
    return this.links.filter((l) => !l.closed).length;
  }

  /** Number of live terminal channels. */
  liveCount(): number {
    let n = 0;
    for (const link of this.links) n += link.procs.size;
    return n;
  }

  onLost(listener: (reason: string) => void): Disposable {
    return this.lostSignal.onLost(listener);
  }

  private addLink(client: Client, primary: boolean): Link {
    const link: Link = {
      client,
      primary,
      channels: 0,
      full: false,
      closed: false,
      idleTimer: undefined,
      procs: new Set(),
    };
    this.links.push(link);
    client.on('error', (error: Error) => {
      if (!link.closed) link.lastError = error.message;
    });
    client.on('close', () => {
      this.closedClients.add(client);
      this.onLinkClosed(link);
    });
    if (!primary) this.scheduleIdle(link);
    return link;
  }

  private onLinkClosed(link: Link): void {
    if (link.closed) return;
    link.closed = true;
    if (link.idleTimer) clearTimeout(link.idleTimer);
    const index = this.links.indexOf(link);
    if (index >= 0) this.links.splice(index, 1);
    for (const proc of [...link.procs]) proc.markLost();
    link.procs.clear();
    this.wakeFreeWaiters();
    if (!link.primary || this.closing) return;
    // The primary connection carries the session shell: the host is gone for this driver.
    const reason = link.lastError
      ? `the connection to ${this.hostName}:${this.port} was lost (${link.lastError})`
      : `the connection to ${this.hostName}:${this.port} was closed`;
    this.lostSignal.fire(reason, () => {
      this.reconnect = undefined;
      for (const other of [...this.links]) other.client.end();
      for (const dep of this.dependencies) dep.end();
    });
  }

  private scheduleIdle(link: Link): void {
    if (link.primary || link.closed) return;
    if (link.idleTimer) clearTimeout(link.idleTimer);
    link.idleTimer = undefined;
    if (link.channels > 0) return;
    link.idleTimer = setTimeout(() => {
      if (link.channels === 0 && !link.closed) link.client.end();
    }, this.extraIdleMs);
    link.idleTimer.unref();
  }

  private wakeFreeWaiters(): void {
    const waiters = [...this.freeWaiters];
    this.freeWaiters.clear();
    for (const wake of waiters) wake();
  }

  /** Throws unless the driver can open channels (`terminal`: new terminals, refused once closing). */
  private assertUsable(terminal: boolean): void {
    if (this.lost) {
      throw new ConchError(ErrorCode.SESSION_LOST, `The SSH connection is lost: ${this.lostSignal.reason}.`, {
        hint: hint`Reconnect with ${verb('connectSsh')}.`,
      });
    }
    if (this.disposed || (terminal && this.closing)) {
      throw new ConchError(
        ErrorCode.SESSION_CLOSED,
        `The SSH connection to ${this.hostName}:${this.port} is closed.`,
      );
    }
  }

  /** Adds an extra connection (one at a time; concurrent callers share it). */
  private async grow(): Promise<void> {
    const reconnect = this.reconnect;
    if (!reconnect) throw new Error('no reconnect');
    this.adding ??= reconnect()
      .then((client) => {
        if (this.lost || this.closing) {
          client.end();
          return;
        }
        this.addLink(client, false);
      })
      .finally(() => {
        this.adding = undefined;
      });
    return this.adding;
  }

  /**
   * Opens a channel on some connection of the pool. On a channel-open failure (the server's channel
   * limit) it tries the next connection, then opens another; `wait` lets short utility channels wait for
   * a free slot when no connection can be added.
   */
  private async openChannel(
    command: string,
    pty: PseudoTtyOptions | undefined,
    waitMs: number,
  ): Promise<{ channel: ClientChannel; link: Link }> {
    const deadline = Date.now() + waitMs;
    /** Connections already tried again after a refusal right after a close (once each). */
    const retried = new Set<Link>();
    let growError: unknown;
    for (;;) {
      this.assertUsable(pty !== undefined);
      for (let i = 0; i < this.links.length; i++) {
        const link = this.links[i] as Link;
        if (link.closed || link.full) continue;
        link.channels++;
        if (link.idleTimer) {
          clearTimeout(link.idleTimer);
          link.idleTimer = undefined;
        }
        try {
          const channel = await execOn(link.client, command, pty);
          channel.once('close', () => {
            link.channels--;
            link.full = false;
            link.lastClosedAt = Date.now();
            this.scheduleIdle(link);
            this.wakeFreeWaiters();
          });
          return { channel, link };
        } catch (error) {
          link.channels--;
          this.scheduleIdle(link);
          if (isChannelOpenFailure(error) && !link.closed) {
            const sinceClose = Date.now() - (link.lastClosedAt ?? Number.NEGATIVE_INFINITY);
            if (sinceClose < SLOT_RELEASE_GRACE_MS && !retried.has(link)) {
              // A channel closed a moment ago: the server may not have released its slot yet. Once more.
              retried.add(link);
              await new Promise((resolve) => setTimeout(resolve, 50));
              i--;
              continue;
            }
            link.full = true;
            continue;
          }
          if (link.closed) continue;
          throw new ConchError(
            ErrorCode.INTERNAL,
            `Could not open an SSH channel: ${(error as Error).message}`,
            { cause: error },
          );
        }
      }
      this.assertUsable(pty !== undefined);
      if (this.reconnect && this.links.length < MAX_LINKS && growError === undefined) {
        try {
          await this.grow();
        } catch (error) {
          growError = error;
        }
        continue;
      }
      if (Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
          function done() {
            clearTimeout(timer);
            resolve();
          }
          this.freeWaiters.add(done);
        });
        growError = undefined;
        continue;
      }
      const why =
        growError !== undefined
          ? `opening another connection failed: ${(growError as Error).message}`
          : (this.reconnectUnavailableReason ?? 'no further connection can be opened');
      throw new ConchError(
        ErrorCode.LIMIT_REACHED,
        `The SSH server refuses more channels on this connection (its MaxSessions limit) and ${why}.`,
        {
          hint: hint`Finish or kill some background commands (${verb('listProcesses')}), raise MaxSessions in the server's sshd_config, or connect with a key or ssh-agent so that conch can open extra connections.`,
        },
      );
    }
  }

  /** The channel host adapter handed to processes. */
  private readonly channelHost = (link: Link): ChannelHost => ({
    scripts: this.scripts,
    get lost() {
      return link.closed;
    },
    release: (proc) => {
      link.procs.delete(proc);
    },
  });

  /**
   * Runs a non-interactive command on its own channel (no PTY) and collects its output. `stdin` is sent
   * and closed. Rejects after `timeoutMs` (closing the channel).
   */
  async exec(command: string, options: SshExecOptions = {}): Promise<SshExecResult> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const { channel } = await this.openChannel(command, undefined, options.slotWaitMs ?? UTILITY_WAIT_MS);
    return new Promise<SshExecResult>((resolve, reject) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let exitCode: number | null = null;
      let signal: string | null = null;
      const timer = setTimeout(() => {
        channel.close();
        reject(new ConchError(ErrorCode.INTERNAL, `A remote command did not finish within ${timeoutMs} ms.`));
      }, timeoutMs);
      channel.on('data', (d: Buffer) => out.push(d));
      channel.stderr.on('data', (d: Buffer) => err.push(d));
      channel.on('exit', (code: number | null, sig?: string) => {
        exitCode = typeof code === 'number' ? code : null;
        signal = sig ? (normalizeSignal(sig) ?? `SIG${sig}`) : null;
      });
      channel.on('error', () => {});
      channel.on('close', () => {
        clearTimeout(timer);
        resolve({
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          exitCode,
          signal,
        });
      });
      channel.end(options.stdin === undefined ? undefined : Buffer.from(options.stdin, 'utf8'));
    });
  }

  /** Runs a POSIX-sh script with arguments; resolves with stdout when it exits 0. */
  private async runScript(script: string, args: readonly string[], options: SshExecOptions): Promise<string> {
    const result = await this.exec(shCommand(script, args), options);
    if (result.exitCode !== 0) {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `A remote helper failed (exit ${result.exitCode ?? result.signal ?? 'unknown'}): ${result.stderr.trim().slice(0, 300)}`,
      );
    }
    return result.stdout;
  }

  /** Starts a program on a new channel with a PTY and waits for its start marker. */
  private async startTerminal(
    file: string,
    { args, cwd, env, cols, rows }: Omit<SpawnOptions, 'file' | 'sandbox'>,
  ): Promise<TerminalProcess> {
    assertEnvNames(env);
    // The start-up script holds the driver's nonce and the environment (the core's session nonce among
    // it): it travels through a private file (written over stdin, removed by the script as it starts),
    // never on the command line, which the remote's `ps` shows to every user.
    const scriptPath = `${this.privateDir}/start-${randomBytes(8).toString('hex')}.sh`;
    const script = await this.writePrivateFile(
      scriptPath.slice(this.privateDir.length + 1),
      startupScript({ nonce: this.nonce, scriptPath, file, args, cwd, env }),
    );
    const opened = await this.openChannel(
      `exec /bin/sh ${shellQuote(script)}`,
      {
        term: env.TERM ?? 'xterm-256color',
        cols,
        rows,
        width: 0,
        height: 0,
        modes: { IUTF8: 1 } as PseudoTtyOptions['modes'],
      },
      0,
    ).catch(async (error: unknown) => {
      await this.removePrivateFile(script);
      throw error;
    });
    const { channel, link } = opened;
    const proc = new SshChannelProcess(channel, this.channelHost(link), this.nonce);
    link.procs.add(proc);
    if (link.closed) proc.markLost();
    const outcome = await proc.waitForStart(START_TIMEOUT_MS);
    if (outcome.ok) return proc;
    proc.dispose();
    if (outcome.reason === 'closed') this.assertUsable(true);
    throw startFailure(
      outcome.reason,
      { file, cwd },
      {
        where: `on ${this.hostName}`,
        host: 'the remote host',
        closed: {
          message: `The remote side closed the channel before ${JSON.stringify(file)} started.`,
          hint: 'Check that the remote account has a working login shell.',
        },
      },
    );
  }

  async openShell(options: OpenShellOptions): Promise<TerminalProcess> {
    return this.startTerminal(options.shell, options);
  }

  async spawn(options: SpawnOptions): Promise<TerminalProcess> {
    return this.startTerminal(options.file, options);
  }

  async writePrivateFile(name: string, content: string): Promise<string> {
    const path = privateFilePath(this.privateDir, name);
    const parent = path.slice(0, path.lastIndexOf('/'));
    await this.runScript('umask 077 && mkdir -p -- "$1" && cat > "$2" && chmod 600 -- "$2"', [parent, path], {
      timeoutMs: 30_000,
      stdin: content,
    });
    return path;
  }

  async removePrivateFile(path: string): Promise<void> {
    if (!isPrivateFilePath(this.privateDir, path) || this.lost || this.closing) return;
    await this.runScript('rm -f -- "$1"', [path], { timeoutMs: 10_000 }).catch(() => {});
  }

  async defaultShell(): Promise<string> {
    return defaultShellOf({ loginShell: this.loginShell, bashPath: this.bashPath });
  }

  /**
   * Closes every channel, removes the remote private directory (when the link is alive), and closes
   * the connections (and ProxyJump hops). Idempotent.
   */
  dispose(): Promise<void> {
    this.disposing ??= this.doDispose();
    return this.disposing;
  }

  private async doDispose(): Promise<void> {
    this.closing = true;
    this.reconnect = undefined;
    const procs = this.links.flatMap((l) => [...l.procs]);
    for (const proc of procs) proc.dispose();
    if (!this.lost && this.privateDir.length > 1) {
      await this.runScript('rm -rf -- "$1"', [this.privateDir], { timeoutMs: 5000, slotWaitMs: 2000 }).catch(
        () => {},
      );
    }
    this.disposed = true;
    const clients = [...this.links.map((l) => l.client), ...this.dependencies].filter(
      (c) => !this.closedClients.has(c),
    );
    await Promise.all(
      clients.map(
        (client) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              client.destroy();
              resolve();
            }, 2000);
            client.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            client.end();
          }),
      ),
    );
  }
}
