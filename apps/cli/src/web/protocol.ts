/**
 * What the web page (`conch web`) and the daemon say to each other, shared by both sides (the page's bundle
 * imports this module: it holds names and types only, no code that needs Node).
 *
 * The page speaks JSON-RPC 2.0 over one WebSocket (`/ws`), one message per line, as every other door of the
 * daemon does. Besides the live-terminal methods of `conch attach` (attach-protocol.ts: `conch/attach` with
 * `read_only` until the person takes over, `conch/input`, `conch/resize`, `conch/detach` and their
 * notifications), it has:
 *
 * - `conch/web/watch {}` → {@link WebState}: every session, the commands of each, the policy and the records
 *   the page shows; from then on `notifications/conch/web/changed` ({@link WebChanges}) whenever any of it
 *   changes.
 * - `conch/web/output {command_id, offset?, length?}` → a `read_output` page of the command's log (lines
 *   `offset`…, default the last 200; paging neither waits nor moves the agent's read cursor): its result,
 *   with the page's header line (`[lines 300-499 of 500, 0 remaining]`) apart in `page_header`.
 *
 * The CLI asks the daemon to serve the page with `conch/web {listen?, token?, stop?, client_pid?}` →
 * {@link WebServeResult} on the daemon's socket (never on the relay, an agent's door).
 */

import type { AuditEntry, ProcessInfo, SessionInfo } from '@conch/core';

/** Method names of the web page's protocol (see the module doc). */
export const WEB_METHODS = {
  serve: 'conch/web',
  watch: 'conch/web/watch',
  output: 'conch/web/output',
  changed: 'notifications/conch/web/changed',
} as const;

/** The path of the page's WebSocket. */
export const WEB_SOCKET_PATH = '/ws';
/** The WebSocket subprotocol of the page. */
export const WEB_SUBPROTOCOL = 'conch.v1';
/**
 * The prefix of the subprotocol that carries the token (`conch.token.TOKEN`): a browser cannot set an
 * `Authorization` header on a WebSocket, and a token in the URL's query would land in logs.
 */
export const TOKEN_SUBPROTOCOL_PREFIX = 'conch.token.';
/** Lines of a command's log a page shows at once. */
export const OUTPUT_PAGE_LINES = 200;

/** A session as the page sees it (`list_sessions`' `Session`, whatever fields the engine gives). */
export type WebSession = SessionInfo & Record<string, unknown>;

/**
 * A command as the page sees it: its `list_processes` row (without `duration_ms` while it runs: count it
 * from `started_at`), and whether a person held the terminal.
 */
export type WebCommand = Omit<ProcessInfo, 'duration_ms'> & {
  duration_ms?: number;
  /** It ran isolated because a person held the session's terminal. */
  held_by_person?: true;
};

/** One record of what the engine decided: every command, input and take-over (the audit log's lines). */
export type WebRecord = AuditEntry & {
  /** Its place in the daemon's sequence of records (increasing). */
  seq: number;
  /** When it was made (ISO 8601). */
  time: string;
};

/** The command policy of the daemon. */
export interface WebPolicy {
  /** True when any rule is configured. */
  active: boolean;
  allow: string[];
  deny: string[];
  /** The audit log's file, when one is configured. */
  audit_log?: string;
}

/** The daemon serving the page. */
export interface WebDaemon {
  pid: number;
  version: string;
  started_at: string;
}

/** What `conch/web/watch` answers. */
export interface WebState {
  daemon: WebDaemon;
  policy: WebPolicy;
  sessions: WebSession[];
  commands: WebCommand[];
  /** The latest records, oldest first. */
  records: WebRecord[];
}

/** What changed since the last state or change the page got (absent members did not change). */
export interface WebChanges {
  /** Every session, when any of them changed. */
  sessions?: WebSession[];
  /** Commands that are new or changed. */
  commands?: WebCommand[];
  /** Ids of commands that are gone (pruned, or their session closed). */
  removed_commands?: string[];
  /** New records, oldest first. */
  records?: WebRecord[];
}

/** What `conch/web` answers. */
export interface WebServeResult {
  /** The page's address, without the token (e.g. `http://127.0.0.1:PORT/`). */
  url: string;
  /** The token the page's data and live stream require. */
  token: string;
  /** False when the page was already served there. */
  started: boolean;
  /** True when `stop` stopped it. */
  stopped?: boolean;
}
