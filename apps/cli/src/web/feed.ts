/**
 * What the daemon keeps for the web page from its start on, whether or not a page is open (so the page
 * shows what happened before it was opened): the latest records of what the engine decided (every command,
 * input and take-over, as the audit log gets them, with their time), and which agent commands ran isolated
 * because a person held the terminal. Both are bounded; secret input never reaches an audit sink at all.
 */

import type { AuditEntry, AuditSink } from '@conch/core';
import type { AgentCommandStart } from '../attach-protocol.js';
import type { WebRecord } from './protocol.js';

/** Records kept. */
export const FEED_RECORDS = 1000;
/** Characters of a record's input kept (a longer one ends in `…`). */
export const FEED_INPUT_CHARS = 2000;
/** Command ids remembered as held by a person. */
const HELD_IDS = 1000;

/** The daemon's memory for the web page (see the module doc). */
export class SupervisionFeed {
  readonly #records: WebRecord[] = [];
  #seq = 0;
  readonly #held = new Set<string>();
  readonly #listeners = new Set<() => void>();

  constructor(
    private readonly maxRecords = FEED_RECORDS,
    private readonly maxInputChars = FEED_INPUT_CHARS,
  ) {}

  /**
   * An audit sink for the engine: each record is kept here, then written to `inner` (the configured audit
   * log, if any) exactly as without the feed.
   */
  auditSink(inner?: AuditSink): AuditSink {
    return {
      record: (entry: AuditEntry) => {
        this.#keep(entry);
        inner?.record(entry);
      },
    };
  }

  #keep(entry: AuditEntry): void {
    const input =
      entry.input.length > this.maxInputChars
        ? `${entry.input.slice(0, this.maxInputChars - 1)}…`
        : entry.input;
    this.#records.push({ ...entry, input, seq: ++this.#seq, time: new Date().toISOString() });
    if (this.#records.length > this.maxRecords)
      this.#records.splice(0, this.#records.length - this.maxRecords);
    for (const listener of this.#listeners) listener();
  }

  /** The records kept with a sequence number above `afterSeq`, oldest first. */
  records(afterSeq = 0): WebRecord[] {
    const first = this.#records.findIndex((r) => r.seq > afterSeq);
    return first < 0 ? [] : this.#records.slice(first);
  }

  /** Calls `listener` after each new record; returns the way to stop. */
  onRecord(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears of an agent command a person's view was told of (attach-protocol.ts). */
  noteCommand(command: AgentCommandStart): void {
    if (!command.held_by_person) return;
    this.#held.add(command.command_id);
    if (this.#held.size > HELD_IDS) this.#held.delete(this.#held.values().next().value as string);
  }

  /** True when the command ran isolated because a person held the terminal (as a view was told). */
  heldByPerson(commandId: string): boolean {
    return this.#held.has(commandId);
  }
}
