/**
 * Starting a command, in one of two ways: typed into the session's shell (foreground: it changes the
 * shell's cwd and environment), or isolated, as its own process on its own terminal with the environment
 * the shell last snapshotted (background, or while the shell or its terminal is busy). Each way gives the
 * command a {@link CommandTerminal}: how it is written to, looked at and killed.
 */

import type { Clock } from '../clock.js';
import type { KillReport, ScreenFactory, TerminalProcess } from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { COMMAND_MARKER } from '../host/markers.js';
import { Command, type CommandTerminal } from './command.js';
import type { CommandRegistry } from './command-registry.js';
import type { EngineDefaults } from './limits.js';
import { type Session, signalFromStatus } from './session.js';
import { TerminalStream } from './terminal-stream.js';
import { endOnlyWait, waitForCommand } from './waiter.js';

/**
 * How long kill_process lets the shell report the end of the job it killed before interrupting the shell
 * itself (ms): the shell reaps its job and reports within moments, unless it goes on with a loop or list.
 */
const SHELL_REPORTS_END_MS = 300;

/**
 * How long kill_process waits for the start marker of a typed command not seen starting yet (ms): the shell
 * writes the marker before it runs the command, so a command it runs has its marker on the way.
 */
const START_MARKER_GRACE_MS = 1000;

/** What the launcher is built from. */
export interface CommandLauncherOptions {
  clock: Clock;
  defaults: Pick<EngineDefaults, 'writeDeadlineMs' | 'snapshotWaitMs'>;
  screenFactory: ScreenFactory | undefined;
  registry: CommandRegistry;
}

/** Starts commands (see the module doc). */
export class CommandLauncher {
  private readonly options: CommandLauncherOptions;

  constructor(options: CommandLauncherOptions) {
    this.options = options;
  }

  /** Types `text` into `session`'s shell (which must be idle) as a new foreground command. */
  async startForeground(session: Session, text: string, cwd: string | undefined): Promise<Command> {
    const { clock, registry } = this.options;
    const id = registry.uniqueId();
    const terminal: CommandTerminal = {
      write: async (data) => {
        await session.lineRead(command, this.options.defaults.writeDeadlineMs);
        return session.write(data);
      },
      inputWaitEvidence: () => session.foregroundInputWait(command),
      kill: async ({ signal, graceMs }) => {
        const proc = session.proc;
        if (!proc) return { result: 'already_exited', survivors: [] };
        // Not seen starting yet: the shell writes a command's start marker before it runs it, so a command
        // the shell runs (its own program may already hold the terminal) has its marker on the way. Only a
        // marker that does not come says the command never started: a person's program holds the terminal
        // and took or holds back the line (nothing of theirs is signalled), or the shell never read it (the
        // line is taken back, as Ctrl+C takes back what a terminal holds, so that it never runs). The command
        // then ends unstarted.
        if (command.awaitingStart) {
          await session.lineRead(command, START_MARKER_GRACE_MS);
          if (command.awaitingStart && !command.ended) {
            if ((await proc.foregroundIsOwn?.().catch(() => undefined)) !== false) {
              await proc.write('\x03', this.options.defaults.writeDeadlineMs).catch(() => {});
            }
            session.abandonUnstarted(command, 'killed');
            return { result: 'killed', survivors: [] };
          }
        }
        const report: KillReport = proc.killJob
          ? await proc.killJob({ signal, graceMs, commandId: id })
          : { result: 'killed', survivors: [] };
        // The shell reports its job's end on its own, moments after the job died. Only a shell that goes
        // on with the rest of a loop or list is interrupted, like Ctrl+C would (as a signal, so a terminal
        // left in raw mode cannot swallow it), until it reports the command's end. A shell that already
        // reported it is never signalled: a late SIGINT would interrupt whatever is typed into it next,
        // and so each signal is awaited, not sent on its way.
        if (proc.killJob) await waitForCommand(command, endOnlyWait(SHELL_REPORTS_END_MS), clock);
        for (let attempt = 0; attempt < 3 && !command.ended && session.proc; attempt++) {
          await session.proc.signal('SIGINT');
          await waitForCommand(command, endOnlyWait(700), clock);
        }
        return report;
      },
      screen: () => session.screenSnapshot(),
      addSecret: (secret) => session.addSecret(secret),
      foregroundProgram: async () => (await session.proc?.foregroundProgram?.()) ?? undefined,
      foregroundPrograms: async () => foregroundProgramsOf(session.proc),
    };
    const command = new Command({
      id,
      sessionId: session.id,
      text,
      isolated: false,
      background: false,
      log: registry.newLog(id),
      clock,
      terminal,
      cwdBefore: session.cwd ?? undefined,
    });
    registry.register(session, command);
    await session.run(command, cwd);
    return command;
  }

  /**
   * Runs `text` as an isolated command of `session`: its own process on its own terminal, started once the
   * shell's environment snapshot is written. `heldByPerson`: it runs isolated because a person holds the
   * session's terminal (the result says so).
   */
  async startIsolated(
    session: Session,
    text: string,
    cwd: string | undefined,
    background: boolean,
    heldByPerson = false,
  ): Promise<Command> {
    const { clock, defaults, registry } = this.options;
    // The environment an isolated command loads is the one the shell snapshots after each command's end.
    await session.snapshotWritten(defaults.snapshotWaitMs);
    const id = registry.uniqueId();
    const snapshot = session.leaseSnapshot();
    const launch = session.integration.isolatedLaunch({
      commandId: id,
      text,
      cwd: cwd ?? session.cwd ?? undefined,
      envFile: snapshot.file,
      shell: session.shell,
    });
    const screen = this.options.screenFactory?.(session.cols, session.rows);
    const stream = new TerminalStream(session.integration.nonce, screen);
    let proc: TerminalProcess | undefined;
    let endInfo: { status: number | null; cwd: string } | undefined;
    const terminal: CommandTerminal = {
      write: (data) => {
        if (!proc)
          return Promise.reject(new ConchError(ErrorCode.COMMAND_FINISHED, `Command ${id} has finished.`));
        return proc.write(data, defaults.writeDeadlineMs);
      },
      inputWaitEvidence: async () => (await proc?.inputWaitEvidence?.()) ?? 'unknown',
      kill: async ({ signal, graceMs }) =>
        proc ? proc.kill({ signal, graceMs, commandId: id }) : { result: 'already_exited', survivors: [] },
      screen: async () => screen?.snapshot(),
      addSecret: (secret) => stream.redactor.add(secret),
      foregroundProgram: async () => (await proc?.foregroundProgram?.()) ?? undefined,
      foregroundPrograms: async () => foregroundProgramsOf(proc),
    };
    try {
      proc = await session.driver.spawn({
        file: launch.file,
        args: launch.args,
        cwd: undefined,
        env: { ...session.env, ...launch.env, [COMMAND_MARKER]: id },
        cols: session.cols,
        rows: session.rows,
        ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
      });
    } catch (error) {
      snapshot.release();
      screen?.dispose();
      throw ConchError.is(error)
        ? error
        : new ConchError(ErrorCode.INTERNAL, `Could not start an isolated command: ${String(error)}`, {
            cause: error,
          });
    }
    const command = new Command({
      id,
      sessionId: session.id,
      text,
      isolated: true,
      background,
      log: registry.newLog(id),
      clock,
      terminal,
      pid: proc.pid,
      heldByPerson,
    });
    const deliver = (pieces: ReturnType<TerminalStream['push']>) => {
      for (const piece of pieces) {
        if (piece.type === 'data') command.appendOutput(piece.bytes);
        else if (piece.marker.type === 'start' && piece.marker.commandId === id) {
          // The wrapper prints its start marker once it has loaded the environment.
          snapshot.release();
        } else if (piece.marker.type === 'end' && piece.marker.commandId === id) {
          endInfo = { status: piece.marker.status, cwd: piece.marker.cwd };
        }
      }
    };
    registry.register(session, command);
    session.announce(command, heldByPerson);
    const running = proc;
    const dataSub = running.onData((chunk) => deliver(stream.push(chunk)));
    const exitSub = running.onExit((info) => {
      deliver(stream.flush());
      snapshot.release();
      dataSub.dispose();
      exitSub.dispose();
      proc = undefined;
      running.dispose();
      // Let the screen take in the last output before it is released (it keeps that final screen).
      if (screen)
        void screen.snapshot().then(
          () => screen.dispose(),
          () => screen.dispose(),
        );
      if (info.lost) {
        command.end({ state: 'lost', exitCode: null, signal: null });
      } else if (endInfo) {
        command.end({ state: 'exited', exitCode: endInfo.status, signal: signalFromStatus(endInfo.status) });
      } else {
        command.end({
          state: info.signal || command.killRequested ? 'killed' : 'exited',
          exitCode: info.signal ? null : info.exitCode,
          signal: info.signal,
        });
      }
    });
    return command;
  }
}

/** Every name the foreground process group of a terminal is known by (falls back to its leader's name). */
async function foregroundProgramsOf(proc: TerminalProcess | undefined): Promise<string[]> {
  if (!proc) return [];
  const all = await proc.foregroundPrograms?.();
  if (all !== undefined) return all;
  const one = await proc.foregroundProgram?.();
  return one === undefined ? [] : [one];
}
