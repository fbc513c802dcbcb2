/**
 * A session's timeline as the page shows it: the agent's commands (from the daemon's listing) and the lines
 * a person typed at its prompt (from the records), in the order they started. Pure: tested in Node.
 */

import type { WebCommand, WebRecord, WebSession } from '../../src/web/protocol.js';

/** One row of a timeline. */
export interface TimelineRow {
  /** A stable key (the command id, or the record's sequence number). */
  key: string;
  /** When it started (ISO 8601). */
  time: string;
  who: 'agent' | 'person';
  text: string;
  /** `running`, `awaiting_input`, `exited`, `killed`, `lost`; `typed` for a person's line. */
  state: string;
  /** How it ran: `isolated`, `background`, `a person held the terminal`. */
  how: string[];
  exit_code?: number | null;
  signal?: string | null;
  duration_ms?: number;
  output_bytes?: number;
  /** The agent's command, whose output can be read. */
  command_id?: string;
}

/** True when a record names this session (by id, or by the name a person attached with). */
function ofSession(record: WebRecord, session: WebSession): boolean {
  return record.session_id === session.session_id || record.session_id === session.name;
}

/** The timeline of `session` (oldest first); `now` counts a running command's duration. */
export function timelineOf(
  session: WebSession,
  commands: readonly WebCommand[],
  records: readonly WebRecord[],
  now: number,
): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const c of commands) {
    if (c.session_id !== session.session_id) continue;
    const how: string[] = [];
    if (c.background) how.push('background');
    else if (c.isolated) how.push('isolated');
    if (c.held_by_person) how.push('a person held the terminal');
    const running = c.state === 'running' || c.state === 'awaiting_input';
    rows.push({
      key: c.command_id,
      time: c.started_at,
      who: 'agent',
      text: c.command,
      state: c.state,
      how,
      ...(running ? {} : { exit_code: c.exit_code, signal: c.signal }),
      duration_ms: c.duration_ms ?? Math.max(0, now - Date.parse(c.started_at)),
      output_bytes: c.output_bytes,
      command_id: c.command_id,
    });
  }
  for (const r of records) {
    if (r.by !== 'person' || r.kind !== 'attach' || !ofSession(r, session)) continue;
    rows.push({ key: `r${r.seq}`, time: r.time, who: 'person', text: r.input, state: 'typed', how: [] });
  }
  return rows.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}
