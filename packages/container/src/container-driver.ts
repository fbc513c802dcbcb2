/**
 * The container driver: the core's `Driver` inside one container, through the Docker Engine API.
 *
 * Every terminal (session shell, isolated or background command) is its own exec with a TTY, started by
 * the shared start-up script (cwd, environment, terminal size, a start marker carrying its PID inside the
 * container) from a private file; the runtime makes each exec a session and process-group leader, so a
 * command's tree is the exec's session plus whatever carries its `CONCH_COMMAND_ID` marker. The host
 * scripts (kill, probe, escaped processes, signal) and file writes run on a few long-lived helper shells
 * ({@link ScriptHelpers}). Private files live in a `mktemp -d` directory (0700) inside the container.
 *
 * The container is the host: when it stops, or the engine cannot be reached any more, every terminal ends
 * as `lost` and `onLost` listeners fire. `dispose` removes the container when conch created it (and was not
 * asked to keep it); a container conch attached to is left running, with the processes conch started in it
 * killed.
 */

import { randomBytes } from 'node:crypto';
import { type Duplex, PassThrough } from 'node:stream';
import {
  ConchError,
  type Disposable,
  type Driver,
  ErrorCode,
  type ExitInfo,
  type OpenShellOptions,
  type SpawnOptions,
  type TerminalProcess,
} from '@conch/core';
import {
  assertEnvNames,
  CONNECT_PROBE,
  defaultShellOf,
  type HostScriptPurpose,
  HostScripts,
  isPrivateFilePath,
  LostSignal,
  parseConnectProbe,
  privateFilePath,
  startFailure,
  startupScript,
} from '@conch/core/host';
import type Docker from 'dockerode';
import type { ContainerEngine } from './engine.js';
import { engineAnswer } from './engine.js';
import { ContainerExecProcess, type ExecHost, exitInfoOf } from './exec-process.js';
import { ScriptHelpers } from './script-helpers.js';

/** The container a driver works in, as `openContainer` found or made it. */
export interface ContainerTarget {
  engine: ContainerEngine;
  container: Docker.Container;
  /** The container's name (without the engine's leading `/`). */
  name: string;
  /** The image it runs. */
  image: string;
  /** The user execs run as (undefined: the container's). */
  user: string | undefined;
  /** Remove the container at `dispose` (conch created it and was not asked to keep it). */
  removeOnDispose: boolean;
}

/** How long a terminal may take to report its start. */
const START_TIMEOUT_MS = 20_000;
/** How long a script waits for a free helper shell, by purpose (a probe that cannot run soon is no evidence). */
const SCRIPT_WAIT_MS: Readonly<Record<HostScriptPurpose, number>> = {
  kill: 5000,
  escaped: 2000,
  probe: 500,
  signal: 2000,
};
/** Most characters of a private file sent in one helper script (an argument stays far below 128 KiB). */
const FILE_CHUNK_CHARS = 32 * 1024;
/**
 * Prints the state of process `$1` from /proc: its state letter and wait status (`exit_code`, field 52 of
 * `stat`, readable while it is unreaped), or `gone`.
 */
const PROCESS_STATE_SCRIPT = `s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo gone; exit 0; }
s=\${s##*) }
set -f
set -- $s
echo "$1 \${50:-}"`;

/** How long the engine may take to report an exec's exit after its stream ended. */
const EXIT_REPORT_MS = 3000;

/** Writes (`new`) or appends (`append`) the text `$3` to the private file `$2` (0600, parents 0700). */
const WRITE_FILE_SCRIPT = `umask 077
if [ "$1" = new ]; then mkdir -p -- "\${2%/*}" && printf '%s' "$3" > "$2" && chmod 600 -- "$2"; else printf '%s' "$3" >> "$2"; fi`;

/** Splits text into chunks of at most `size` characters, never between the halves of a surrogate pair. */
function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + size, text.length);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  return out.length > 0 ? out : [''];
}

/** The container driver (see the module doc). Created by `openContainer`. */
export class ContainerDriver implements Driver {
  readonly specificationVersion = 1 as const;
  readonly kind = 'container' as const;
  /** The container's name and image. */
  readonly name: string;
  readonly image: string;
  private readonly engine: ContainerEngine;
  private readonly container: Docker.Container;
  private readonly user: string | undefined;
  private readonly removeOnDispose: boolean;
  private readonly helpers: ScriptHelpers;
  private readonly nonce = randomBytes(8).toString('hex');
  private readonly procs = new Set<ContainerExecProcess>();
  private readonly lostSignal = new LostSignal();
  private hostScripts: HostScripts | undefined;
  private privateDirectory = '';
  private loginShell = '';
  private bashPath = '';
  private closing = false;
  private disposing: Promise<void> | undefined;

  private constructor(target: ContainerTarget) {
    this.engine = target.engine;
    this.container = target.container;
    this.name = target.name;
    this.image = target.image;
    this.user = target.user;
    this.removeOnDispose = target.removeOnDispose;
    this.helpers = new ScriptHelpers(() => this.startHelper());
  }

  /** The host scripts (kill, probe, escaped processes, signal), run on the helper shells. */
  get scripts(): HostScripts {
    if (!this.hostScripts) throw new Error('the container driver has not probed its container yet');
    return this.hostScripts;
  }

  /**
   * A driver in `target`'s container, once its connect probe ran (private directory, login shell). On
   * failure the driver is disposed (which removes a container conch created) and the error rethrown.
   */
  static async open(target: ContainerTarget): Promise<ContainerDriver> {
    const driver = new ContainerDriver(target);
    try {
      await driver.probe();
    } catch (error) {
      await driver.dispose();
      throw error;
    }
    return driver;
  }

  /** The private 0700 directory inside the container. */
  get privateDir(): string {
    return this.privateDirectory;
  }

  /** True once the container or the engine is gone for this driver. */
  get lost(): boolean {
    return this.lostSignal.lost;
  }

  /** Number of live terminal execs. */
  liveCount(): number {
    return this.procs.size;
  }

  onLost(listener: (reason: string) => void): Disposable {
    return this.lostSignal.onLost(listener);
  }

  /** Marks the container gone: every terminal ends as lost, listeners fire once. */
  private markLost(reason: string): void {
    if (this.closing) return;
    this.lostSignal.fire(reason, () => {
      for (const proc of [...this.procs]) proc.markLost();
      this.helpers.close();
    });
  }

  private assertUsable(): void {
    if (this.lostSignal.reason !== undefined) {
      throw new ConchError(
        ErrorCode.SESSION_LOST,
        `The container ${this.name} is gone: ${this.lostSignal.reason}.`,
      );
    }
    if (this.closing)
      throw new ConchError(ErrorCode.SESSION_CLOSED, `The container session in ${this.name} is closed.`);
  }

  /** Starts one helper shell: `/bin/sh` reading commands, its output demultiplexed. */
  private async startHelper(): Promise<{ stream: Duplex; stdout: PassThrough; stderr: PassThrough }> {
    const exec = await this.engine.request(() =>
      this.container.exec({
        Cmd: ['/bin/sh'],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        ...(this.user === undefined ? {} : { User: this.user }),
      }),
    );
    const stream = await this.engine.request(() => exec.start({ hijack: true, stdin: true }));
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const docker = await this.engine.docker();
    docker.modem.demuxStream(stream, stdout, stderr);
    stream.on('end', () => {
      stdout.end();
      stderr.end();
    });
    return { stream, stdout, stderr };
  }

  /** Runs a POSIX-sh script on a helper; resolves with its stdout when it exits 0. */
  private async runScript(
    script: string,
    args: readonly string[],
    options: { timeoutMs: number; waitMs: number },
  ): Promise<string> {
    const result = await this.helpers.run(script, args, options);
    if (result.status !== 0) {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `A helper script in container ${this.name} failed (exit ${result.status}): ${result.stderr.trim().slice(0, 300)}`,
      );
    }
    return result.stdout;
  }

  /** The connect probe: private directory, login shell, bash, process facts. */
  private async probe(): Promise<void> {
    let out: string;
    try {
      out = await this.runScript(CONNECT_PROBE, [], { timeoutMs: 20_000, waitMs: 20_000 });
    } catch (error) {
      if (ConchError.is(error) && error.code === ErrorCode.CONTAINER_ENGINE_UNREACHABLE) throw error;
      throw new ConchError(
        ErrorCode.INVALID_ARGUMENT,
        `Container ${this.name} cannot run conch's shell: /bin/sh did not run there (${(error as Error).message}).`,
        {
          hint: 'conch needs a POSIX shell at /bin/sh (and mktemp) in the container; use an image that has one (debian, ubuntu, alpine, python, node…).',
          cause: error,
        },
      );
    }
    const probe = parseConnectProbe(out);
    if (probe === undefined || probe.privateDir === '') {
      throw new ConchError(
        ErrorCode.INTERNAL,
        `Could not create a private directory in container ${this.name} (mktemp -d under $TMPDIR or /tmp failed).`,
        { hint: 'Give the container a writable /tmp (or TMPDIR) for the user conch runs as.' },
      );
    }
    this.privateDirectory = probe.privateDir;
    this.loginShell = probe.loginShell;
    this.bashPath = probe.bashPath;
    this.hostScripts = new HostScripts(
      (script, args, call) =>
        this.runScript(script, args, { timeoutMs: call.timeoutMs, waitMs: SCRIPT_WAIT_MS[call.purpose] }),
      probe.facts,
    );
  }

  /** The exec host adapter handed to a terminal. */
  private execHost(exec: Docker.Exec): ExecHost {
    const driver = this;
    return {
      scripts: this.scripts,
      get lost() {
        return driver.lost;
      },
      exitOf: () => this.exitOf(exec),
      resize: async (cols, rows) => {
        await exec.resize({ h: rows, w: cols }).catch((error: unknown) => {
          // Podman answers a resize that took effect with 201, which dockerode reports as an error.
          if (engineAnswer(error)?.statusCode !== 201) throw error;
        });
      },
      release: (proc) => {
        this.procs.delete(proc);
      },
      processState: async (pid) => {
        const out = await this.runScript(PROCESS_STATE_SCRIPT, [String(pid)], {
          timeoutMs: 5000,
          waitMs: 2000,
        });
        const [state, status] = out.trim().split(' ');
        if (state === 'gone' || state === undefined) return { state: 'gone' };
        if ((state === 'Z' || state === 'X') && status !== undefined && /^\d+$/.test(status)) {
          return { state: 'ended', status: Number(status) };
        }
        return { state: 'running' };
      },
    };
  }

  /**
   * How an exec ended, once its stream has ended: its exit status from the engine; `lost` when the
   * container no longer runs, the engine cannot be asked, or the exec still runs (its stream broke).
   */
  private async exitOf(exec: Docker.Exec): Promise<ExitInfo> {
    const lost: ExitInfo = { exitCode: null, signal: null, lost: true };
    const deadline = Date.now() + EXIT_REPORT_MS;
    let status: number | undefined;
    for (;;) {
      let info: Docker.ExecInspectInfo;
      try {
        info = await this.engine.request(() => exec.inspect(), 5000);
      } catch (error) {
        this.markLost(
          ConchError.is(error) && error.code === ErrorCode.CONTAINER_ENGINE_UNREACHABLE
            ? `the engine at ${this.engine.where} cannot be reached`
            : 'the engine no longer knows its processes',
        );
        return lost;
      }
      if (!info.Running && typeof info.ExitCode === 'number') {
        status = info.ExitCode;
        break;
      }
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const running = await this.isRunning();
    if (!running) {
      this.markLost(`container ${this.name} stopped`);
      return lost;
    }
    // Still running after its stream ended: the engine dropped the stream (it restarted); conch cannot
    // reach that terminal again.
    return status === undefined ? lost : exitInfoOf(status);
  }

  /** Whether the container still runs (false when the engine cannot tell). */
  private async isRunning(): Promise<boolean> {
    try {
      const info = await this.engine.request(() => this.container.inspect(), 5000);
      return info.State?.Running === true;
    } catch {
      return false;
    }
  }

  /** Starts a program on a new exec with a TTY and waits for its start marker. */
  private async startTerminal(
    file: string,
    args: readonly string[],
    cwd: string | undefined,
    env: Record<string, string>,
    cols: number,
    rows: number,
  ): Promise<TerminalProcess> {
    this.assertUsable();
    assertEnvNames(env);
    // The start-up script holds the driver's nonce and the environment (the core's session nonce among
    // it): it travels through a private file, removed by the script as it starts, never on the exec's
    // command line, which the engine shows to anyone who may inspect the container.
    const scriptName = `start-${randomBytes(8).toString('hex')}.sh`;
    const scriptPath = privateFilePath(this.privateDirectory, scriptName);
    await this.writePrivateFile(
      scriptName,
      startupScript({ nonce: this.nonce, scriptPath, file, args, cwd, env, size: { cols, rows } }),
    );
    let proc: ContainerExecProcess;
    try {
      const exec = await this.engine.request(() =>
        this.container.exec({
          Cmd: ['/bin/sh', scriptPath],
          AttachStdin: true,
          AttachStdout: true,
          AttachStderr: true,
          Tty: true,
          Env: [`TERM=${env.TERM ?? 'xterm-256color'}`],
          ...(this.user === undefined ? {} : { User: this.user }),
        }),
      );
      const stream = await this.engine.request(() => exec.start({ hijack: true, stdin: true, Tty: true }));
      proc = new ContainerExecProcess(stream, this.execHost(exec), this.nonce);
    } catch (error) {
      await this.removePrivateFile(scriptPath);
      throw error;
    }
    this.procs.add(proc);
    if (this.lost) proc.markLost();
    const outcome = await proc.waitForStart(START_TIMEOUT_MS);
    if (outcome.ok) {
      // The script set the size with stty; the engine learns it too (and where stty is missing, sets it).
      proc.resize(cols, rows);
      return proc;
    }
    proc.dispose();
    if (outcome.reason === 'closed') this.assertUsable();
    throw startFailure(
      outcome.reason,
      { file, cwd },
      {
        where: `in container ${this.name}`,
        host: 'the container',
        closed: {
          message: `The exec in container ${this.name} ended before ${JSON.stringify(file)} started.`,
          hint: 'Check that the container runs and has /bin/sh.',
        },
      },
    );
  }

  async openShell(options: OpenShellOptions): Promise<TerminalProcess> {
    return this.startTerminal(
      options.shell,
      options.args,
      options.cwd,
      options.env,
      options.cols,
      options.rows,
    );
  }

  async spawn(options: SpawnOptions): Promise<TerminalProcess> {
    return this.startTerminal(
      options.file,
      options.args,
      options.cwd,
      options.env,
      options.cols,
      options.rows,
    );
  }

  async writePrivateFile(name: string, content: string): Promise<string> {
    const path = privateFilePath(this.privateDirectory, name);
    this.assertUsable();
    let mode = 'new';
    for (const chunk of chunks(content, FILE_CHUNK_CHARS)) {
      await this.runScript(WRITE_FILE_SCRIPT, [mode, path, chunk], { timeoutMs: 30_000, waitMs: 30_000 });
      mode = 'append';
    }
    return path;
  }

  async removePrivateFile(path: string): Promise<void> {
    if (!isPrivateFilePath(this.privateDirectory, path) || this.lost || this.closing) return;
    await this.runScript('rm -f -- "$1"', [path], { timeoutMs: 10_000, waitMs: 10_000 }).catch(() => {});
  }

  async defaultShell(): Promise<string> {
    return defaultShellOf({ loginShell: this.loginShell, bashPath: this.bashPath });
  }

  async findProgram(name: string): Promise<string | undefined> {
    const out = await this.runScript('command -v -- "$1" || :', [name], { timeoutMs: 10_000, waitMs: 5000 });
    const path = out.trim();
    return path.startsWith('/') ? path : undefined;
  }

  /**
   * Ends every terminal, then: removes the container when conch created it (and was not asked to keep
   * it); otherwise kills what conch's sessions left running in it and removes the private directory.
   * Idempotent.
   */
  dispose(): Promise<void> {
    this.disposing ??= this.doDispose();
    return this.disposing;
  }

  private async doDispose(): Promise<void> {
    const procs = [...this.procs];
    if (!this.removeOnDispose && !this.lost) {
      // An attached container stays: nothing conch started in it may outlive its terminals.
      await Promise.all(
        procs
          .filter((proc) => !proc.hasExited)
          .map((proc) => proc.kill({ signal: 'SIGHUP', graceMs: 1000 }).catch(() => undefined)),
      );
    }
    for (const proc of procs) proc.dispose();
    if (!this.removeOnDispose && !this.lost && this.privateDirectory !== '') {
      await this.runScript('rm -rf -- "$1"', [this.privateDirectory], {
        timeoutMs: 5000,
        waitMs: 2000,
      }).catch(() => {});
    }
    this.closing = true;
    this.helpers.close();
    if (this.removeOnDispose) {
      // Removing it kills whatever runs in it. A lost container is removed too when the engine answers.
      await this.engine
        .request(
          (_docker, abortSignal) => this.container.remove({ force: true, v: true, abortSignal }),
          this.lost ? 5000 : 20_000,
        )
        .catch(() => {});
    }
  }
}
