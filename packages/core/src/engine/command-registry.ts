/**
 * The engine's commands by id: registering a new one (its id and its output log), looking one up with the
 * documented errors, listing them, the live-command limit, and pruning the finished ones (older than the
 * retention time, or beyond the newest N finished: docs/sessions.md "Limits").
 */

import type { Clock } from '../clock.js';
import type { SpillStore } from '../driver.js';
import { ConchError, ErrorCode } from '../errors.js';
import { hint, verb } from '../hint.js';
import { OutputLog } from '../output/output-log.js';
import type { ProcessInfo } from '../types.js';
import type { Command } from './command.js';
import { newCommandId, type RandomBytes } from './ids.js';
import { type EngineLimits, retentionTime } from './limits.js';
import { cutListedCommands } from './listing.js';
import type { Session } from './session.js';

/** What a registry is built from. */
export interface CommandRegistryOptions {
  clock: Clock;
  limits: EngineLimits;
  random: RandomBytes;
  spill: SpillStore | undefined;
  /** Keep spill files when commands are forgotten (`--keep-spill`). */
  keepLogs: boolean;
  /** The engine's open sessions by id (a pruned command leaves its session's `commandIds`). */
  sessions: ReadonlyMap<string, Session>;
}

/** Which commands a listing shows (the `list_processes` filters). */
export interface CommandFilter {
  /** Case-insensitive substring of the command text, or part of its id. */
  filter?: string;
  /** Only this session's commands (an id). */
  sessionId?: string;
  includeFinished: boolean;
}

/** Which finished commands are pruned, in words, from the configured limits. */
export function retentionWords(limits: Pick<EngineLimits, 'retainMs' | 'retainFinished'>): string {
  return `finished > ${retentionTime(limits)} ago or beyond the newest ${limits.retainFinished}`;
}

/** The commands of one engine (see the module doc). */
export class CommandRegistry {
  private readonly options: CommandRegistryOptions;
  private readonly commands = new Map<string, Command>();
  /** The finished commands in the order they ended, oldest first: what {@link prune} drops first. */
  private readonly finished = new Map<string, Command>();

  constructor(options: CommandRegistryOptions) {
    this.options = options;
  }

  /** A command id no registered command has. */
  uniqueId(): string {
    for (;;) {
      const id = newCommandId(this.options.random);
      if (!this.commands.has(id)) return id;
    }
  }

  /** A new output log for command `commandId`, spilling to the spill store when there is one. */
  newLog(commandId: string): OutputLog {
    const { limits } = this.options;
    const spill = this.options.spill?.create(commandId);
    return new OutputLog({
      ringChars: limits.ringChars,
      rawRingBytes: limits.rawRingBytes,
      ...(spill ? { spill } : {}),
    });
  }

  /** Adds `command` to the registry and to its session's commands; it is counted as finished once it ends. */
  register(session: Session, command: Command): void {
    this.commands.set(command.id, command);
    session.commandIds.push(command.id);
    if (command.ended) this.finished.set(command.id, command);
    else command.onEnd.on(() => this.finished.set(command.id, command));
  }

  /** The command with id `commandId` (after pruning), or `COMMAND_NOT_FOUND`. */
  get(commandId: string): Command {
    this.prune();
    const command = this.commands.get(commandId);
    if (!command) {
      throw new ConchError(ErrorCode.COMMAND_NOT_FOUND, `Invalid command_id: ${JSON.stringify(commandId)}.`, {
        hint: hint`The id is unknown or was pruned (${retentionWords(this.options.limits)}); ${verb('listProcesses')} shows valid ids.`,
      });
    }
    return command;
  }

  /** The running command with id `commandId`: `COMMAND_FINISHED` once it has ended (it takes no input). */
  getLive(commandId: string): Command {
    const command = this.get(commandId);
    if (command.ended) {
      throw new ConchError(
        ErrorCode.COMMAND_FINISHED,
        `Command ${commandId} has already finished (${command.state}, exit code ${command.exitCode}); it takes no input.`,
        {
          hint: hint`${verb('readOutput')} still returns its log; run a new command with ${verb('execute')}.`,
        },
      );
    }
    return command;
  }

  /** The registered commands of `session`, oldest first. */
  ofSession(session: Session): Command[] {
    const found: Command[] = [];
    for (const id of session.commandIds) {
      const command = this.commands.get(id);
      if (command) found.push(command);
    }
    return found;
  }

  /** Every registered command, oldest first. */
  all(): IterableIterator<Command> {
    return this.commands.values();
  }

  /** The listing rows of the commands `filter` selects, their texts cut to the listing's bounds. */
  list(filter: CommandFilter): ProcessInfo[] {
    this.prune();
    const text = filter.filter?.toLowerCase();
    const rows = [...this.commands.values()]
      .filter((c) => filter.includeFinished || !c.ended)
      .filter((c) => filter.sessionId === undefined || c.sessionId === filter.sessionId)
      .filter((c) => text === undefined || c.text.toLowerCase().includes(text) || c.id.includes(text))
      .map((c) => c.toProcessInfo());
    return cutListedCommands(rows, this.options.limits);
  }

  /** Refuses a new command (`LIMIT_REACHED`) while the live-command limit is reached. */
  checkLiveLimit(): void {
    const { maxLiveCommands } = this.options.limits;
    let live = 0;
    for (const c of this.commands.values()) if (!c.ended) live++;
    if (live >= maxLiveCommands) {
      throw new ConchError(
        ErrorCode.LIMIT_REACHED,
        `Live command limit reached: ${live} of ${maxLiveCommands} commands are running.`,
        {
          hint: hint`Kill finished-with background commands with ${verb('killProcess')} (${verb('listProcesses')} shows them).`,
        },
      );
    }
  }

  /** Removes the commands with these ids and closes their logs (their spill files go unless kept). */
  forget(ids: Iterable<string>): void {
    for (const id of ids) {
      const command = this.commands.get(id);
      if (!command) continue;
      this.commands.delete(id);
      this.finished.delete(id);
      command.log.close(!this.options.keepLogs);
    }
  }

  /**
   * Drops finished commands older than the retention time or beyond the newest N finished. Oldest first,
   * stopping at the first one that stays: a call costs what it drops, not what is retained.
   */
  prune(): void {
    const { clock, limits, sessions } = this.options;
    const now = clock.now();
    for (const command of this.finished.values()) {
      const stale = now - (command.endedAt ?? now) > limits.retainMs;
      if (!stale && this.finished.size <= limits.retainFinished) break;
      this.forget([command.id]);
      const session = sessions.get(command.sessionId);
      if (session) {
        const at = session.commandIds.indexOf(command.id);
        if (at >= 0) session.commandIds.splice(at, 1);
      }
    }
  }
}
