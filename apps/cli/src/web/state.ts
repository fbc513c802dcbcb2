/**
 * The page's picture of the daemon (`conch/web/watch`) and what changed in it since a page last heard: built
 * from the service's listings (at once, without asking the hosts anything) and the daemon's feed.
 */

import type { ConchService } from '@conch/service';
import type { SupervisionFeed } from './feed.js';
import type {
  WebChanges,
  WebCommand,
  WebDaemon,
  WebPolicy,
  WebRecord,
  WebSession,
  WebState,
} from './protocol.js';

/** Where the page's state comes from. */
export interface StateSource {
  service: ConchService;
  feed: SupervisionFeed;
  policy: WebPolicy;
  daemon: () => WebDaemon;
}

/**
 * The sessions and commands now (without the records). A running command's row has no `duration_ms` (the
 * page counts it from `started_at`), so that it changes only when something happens to it.
 */
async function current(source: StateSource): Promise<{ sessions: WebSession[]; commands: WebCommand[] }> {
  const sessions = (await source.service.listSessions()).sessions as WebSession[];
  const commands = source.service.listCommands({}).processes.map((p): WebCommand => {
    const row: WebCommand = { ...p };
    if (p.state === 'running' || p.state === 'awaiting_input') delete row.duration_ms;
    if (source.feed.heldByPerson(p.command_id)) row.held_by_person = true;
    return row;
  });
  return { sessions, commands };
}

/** One page's view of the state: the whole of it once, then what changed since (see {@link changes}). */
export class StateWatch {
  #sessions = '';
  readonly #commands = new Map<string, string>();
  #seq = 0;

  constructor(private readonly source: StateSource) {}

  /** The whole state now; later {@link changes} are relative to it. */
  async state(): Promise<WebState> {
    const { sessions, commands } = await current(this.source);
    const records: WebRecord[] = this.source.feed.records();
    this.#sessions = JSON.stringify(sessions);
    this.#commands.clear();
    for (const c of commands) this.#commands.set(c.command_id, JSON.stringify(c));
    this.#seq = records.at(-1)?.seq ?? this.#seq;
    return { daemon: this.source.daemon(), policy: this.source.policy, sessions, commands, records };
  }

  /** What changed since the last {@link state} or {@link changes}; undefined when nothing did. */
  async changes(): Promise<WebChanges | undefined> {
    const { sessions, commands } = await current(this.source);
    const out: WebChanges = {};
    const sessionsJson = JSON.stringify(sessions);
    if (sessionsJson !== this.#sessions) {
      this.#sessions = sessionsJson;
      out.sessions = sessions;
    }
    const seen = new Set<string>();
    const changed: WebCommand[] = [];
    for (const c of commands) {
      seen.add(c.command_id);
      const json = JSON.stringify(c);
      if (this.#commands.get(c.command_id) === json) continue;
      this.#commands.set(c.command_id, json);
      changed.push(c);
    }
    if (changed.length > 0) out.commands = changed;
    const removed = [...this.#commands.keys()].filter((id) => !seen.has(id));
    for (const id of removed) this.#commands.delete(id);
    if (removed.length > 0) out.removed_commands = removed;
    const records = this.source.feed.records(this.#seq);
    if (records.length > 0) {
      this.#seq = records.at(-1)!.seq;
      out.records = records;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
}
