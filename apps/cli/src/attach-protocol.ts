/**
 * The daemon's live-terminal methods for `conch attach`: MCP-compatible JSON-RPC on the same connection
 * as the tools (not a second protocol), requests from the client and notifications from the daemon. They
 * are daemon-only: they are not tools, so MCP clients never list them.
 *
 * - `conch/attach {session_id, cols?, rows?, take_over?, read_only?, client_pid?}` → `{attach_id, input,
 *   read_only_reason?, screen, cursor, alt_screen, cols, rows}`: whether keystrokes are accepted, and the
 *   current screen (and its size) to start the view with; `read_only` only watches (the web page until the
 *   person takes over). From then on `notifications/conch/output {attach_id, data}` (base64 bytes as
 *   printed, conch's markers and typed wrapper lines removed), `notifications/conch/command {attach_id,
 *   command_id, text, isolated, background, held_by_person}` as each agent command starts, and, when the
 *   shell ends, `notifications/conch/closed {attach_id}`.
 * - `conch/input {attach_id, data}` (base64 keystrokes), `conch/resize {attach_id, cols, rows}`,
 *   `conch/detach {attach_id}` → `{}`.
 * - `conch/follow {command_id, follow_id, from_byte?}` → `{}`: one command's raw output as it arrives (how
 *   `conch exec` streams to a terminal), as `notifications/conch/command_output {follow_id, text, state}`
 *   from `from_byte` (default 0) on, the last one when the command has ended; `conch/unfollow {follow_id}`.
 *
 * Who may use them: `conch/attach` and `conch/input` are a person's (keystrokes typed through them are not
 * checked by the command policy). They are refused on a connection that said it is the MCP relay
 * (`conch mcp --daemon`, an agent's door); a take-over follows the engine's rules (refused under a policy
 * from inside a terminal conch manages, or from a client that does not say which process it is; the web
 * page's connection is a person's, established when its token was handed out).
 *
 * Bounded: output for a view or a follow is sent only while the connection's peer keeps reading. Once more
 * than `maxBacklogBytes` wait to be written to it (a stopped `conch attach`, a flood), new output is dropped
 * and counted; when the peer reads again it gets `notifications/conch/dropped {attach_id | follow_id,
 * bytes}` (a view also gets the current screen, to redraw from) and the output goes on.
 */

import { randomUUID } from 'node:crypto';
import type { TerminalAttachment, TerminalWatcher } from '@conch/core';
import type { ConchService } from '@conch/service';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import * as z from 'zod';
import { ATTACH_METHODS } from './attach-methods.js';

/** Method names of the attach protocol (defined apart from the schemas, see attach-methods.ts). */
export { ATTACH_METHODS };

/** Bytes queued for one connection beyond which view and follow output is dropped (see the module doc). */
export const DEFAULT_VIEWER_BACKLOG_BYTES = 1024 * 1024;

const size = z.number().int().min(1).max(10_000);
/** `conch/attach` request. */
export const AttachRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.attach),
  params: z.object({
    session_id: z.string(),
    cols: size.optional(),
    rows: size.optional(),
    take_over: z.boolean().optional(),
    read_only: z.boolean().optional(),
    client_pid: z.number().int().optional(),
  }),
});
/** `conch/attach` result. */
export const AttachResultSchema = z.object({
  attach_id: z.string(),
  input: z.boolean(),
  read_only_reason: z.string().optional(),
  screen: z.array(z.string()),
  cursor: z.object({ row: z.number(), col: z.number() }).optional(),
  alt_screen: z.boolean().optional(),
  /** The screen's size (the session's terminal). */
  cols: z.number().optional(),
  rows: z.number().optional(),
});
/** `conch/input` request. */
export const InputRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.input),
  params: z.object({ attach_id: z.string(), data: z.string() }),
});
/** `conch/resize` request. */
export const ResizeRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.resize),
  params: z.object({ attach_id: z.string(), cols: size, rows: size }),
});
/** `conch/detach` request. */
export const DetachRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.detach),
  params: z.object({ attach_id: z.string() }),
});
/** `notifications/conch/output`. */
export const OutputNotificationSchema = z.object({
  method: z.literal(ATTACH_METHODS.output),
  params: z.object({ attach_id: z.string(), data: z.string() }),
});
/** `notifications/conch/command`: an agent's command starts in (or, isolated, beside) the session. */
export const CommandNotificationSchema = z.object({
  method: z.literal(ATTACH_METHODS.command),
  params: z.object({
    attach_id: z.string(),
    command_id: z.string(),
    text: z.string(),
    isolated: z.boolean(),
    background: z.boolean(),
    held_by_person: z.boolean(),
  }),
});
/** `notifications/conch/closed`. */
export const ClosedNotificationSchema = z.object({
  method: z.literal(ATTACH_METHODS.closed),
  params: z.object({ attach_id: z.string() }),
});
/** `conch/follow` request. */
export const FollowRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.follow),
  params: z.object({
    command_id: z.string(),
    /** Chosen by the client (e.g. a UUID), so it can match notifications that arrive before the reply. */
    follow_id: z.string().min(1).max(100),
    from_byte: z.number().int().min(0).optional(),
  }),
});
/** `conch/unfollow` request. */
export const UnfollowRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.unfollow),
  params: z.object({ follow_id: z.string() }),
});
/** `notifications/conch/command_output`. */
export const CommandOutputNotificationSchema = z.object({
  method: z.literal(ATTACH_METHODS.commandOutput),
  params: z.object({ follow_id: z.string(), text: z.string(), state: z.string() }),
});
/** `notifications/conch/dropped`: output not sent while the peer did not read (see the module doc). */
export const DroppedNotificationSchema = z.object({
  method: z.literal(ATTACH_METHODS.dropped),
  params: z.object({
    attach_id: z.string().optional(),
    follow_id: z.string().optional(),
    bytes: z.number(),
    screen: z.array(z.string()).optional(),
    cursor: z.object({ row: z.number(), col: z.number() }).optional(),
  }),
});
/** An empty result. */
export const EmptyResultSchema = z.object({}).loose();

/** What the attach methods know of the connection they serve. */
export interface AttachConnection {
  /** Bytes written to the connection's peer and not yet read by it. */
  backlogBytes(): number;
  /** True once the connection said it is the MCP relay (an agent's door, not a person's terminal). */
  isRelay(): boolean;
  /** Bytes queued beyond which output is dropped (default {@link DEFAULT_VIEWER_BACKLOG_BYTES}). */
  maxBacklogBytes?: number;
  /**
   * Whether the client of a take-over runs inside a terminal conch manages, when the connection knows
   * (default: the service asks the host's process facts about the `client_pid` it gave; one that gives
   * none could be anything, and counts as inside).
   */
  fromConchTerminal?: (clientPid: number | undefined) => boolean | Promise<boolean>;
  /** Hears of each agent command a view of this connection is told of (see `notifications/conch/command`). */
  onAgentCommand?: (command: AgentCommandStart) => void;
}

/** What a view is told of an agent's command as it starts. */
export type AgentCommandStart = Parameters<NonNullable<TerminalWatcher['onCommand']>>[0];

/** The refusal of a person's method on the relay. */
function refuseOnRelay(method: string): never {
  throw new Error(
    `${method} is refused on this connection: it is the MCP relay (conch mcp --daemon), an agent's door, and ${method} types a person's keystrokes, which the command policy does not check. Use conch attach in your own terminal.`,
  );
}

/**
 * Sends a stream of output notifications only while the peer reads: drops and counts what comes while too
 * much is queued, and announces the drop once the peer reads again.
 */
function boundedSender(connection: AttachConnection, announce: (bytes: number) => void) {
  const max = connection.maxBacklogBytes ?? DEFAULT_VIEWER_BACKLOG_BYTES;
  let dropped = 0;
  return (size: number, send: () => void): void => {
    if (connection.backlogBytes() > max) {
      dropped += size;
      return;
    }
    if (dropped > 0) {
      const bytes = dropped;
      dropped = 0;
      announce(bytes);
    }
    send();
  };
}

/**
 * Serves the attach methods on one daemon connection. Returns a function that detaches every view of
 * the connection (call it when the connection closes).
 */
export function serveAttach(server: Server, service: ConchService, connection: AttachConnection): () => void {
  const views = new Map<string, TerminalAttachment>();
  const follows = new Map<string, { dispose(): void }>();
  const view = (id: string): TerminalAttachment => {
    const found = views.get(id);
    if (!found) throw new Error(`Unknown attach_id ${JSON.stringify(id)}: attach first.`);
    return found;
  };
  const notify = (method: string, params: Record<string, unknown>) => {
    void server.notification({ method, params }).catch(() => {});
  };
  server.setRequestHandler(AttachRequestSchema, async (request) => {
    if (connection.isRelay()) refuseOnRelay(ATTACH_METHODS.attach);
    const id = randomUUID();
    const { session_id, cols, rows, take_over, read_only, client_pid } = request.params;
    const send = boundedSender(connection, (bytes) => {
      void attachment
        .screen()
        .then((screen) =>
          notify(ATTACH_METHODS.dropped, {
            attach_id: id,
            bytes,
            ...(screen ? { screen: screen.rows, cursor: screen.cursor } : {}),
          }),
        )
        .catch(() => {});
    });
    const attachment: TerminalAttachment = await service.attachTerminal(
      session_id,
      {
        onOutput: (bytes) =>
          send(bytes.length, () =>
            notify(ATTACH_METHODS.output, { attach_id: id, data: Buffer.from(bytes).toString('base64') }),
          ),
        onCommand: (command) => {
          connection.onAgentCommand?.(command);
          notify(ATTACH_METHODS.command, { attach_id: id, ...command });
        },
        onClose: () => {
          views.delete(id);
          notify(ATTACH_METHODS.closed, { attach_id: id });
        },
      },
      {
        takeOver: take_over === true,
        watchOnly: read_only === true,
        ...(client_pid === undefined ? {} : { clientPid: client_pid }),
        ...(connection.fromConchTerminal === undefined
          ? {}
          : { fromConchTerminal: await connection.fromConchTerminal(client_pid) }),
      },
    );
    views.set(id, attachment);
    if (cols !== undefined && rows !== undefined) attachment.resize(cols, rows);
    const screen = await attachment.screen();
    return {
      attach_id: id,
      input: attachment.input,
      ...(attachment.readOnlyReason === undefined ? {} : { read_only_reason: attachment.readOnlyReason }),
      screen: screen?.rows ?? [],
      ...(screen === undefined
        ? {}
        : {
            cursor: screen.cursor,
            alt_screen: screen.alt_screen,
            cols: screen.cols,
            rows: screen.rows_count,
          }),
    };
  });
  server.setRequestHandler(InputRequestSchema, async (request) => {
    if (connection.isRelay()) refuseOnRelay(ATTACH_METHODS.input);
    await view(request.params.attach_id).write(Buffer.from(request.params.data, 'base64'));
    return {};
  });
  server.setRequestHandler(ResizeRequestSchema, async (request) => {
    view(request.params.attach_id).resize(request.params.cols, request.params.rows);
    return {};
  });
  server.setRequestHandler(DetachRequestSchema, async (request) => {
    views.get(request.params.attach_id)?.detach();
    views.delete(request.params.attach_id);
    return {};
  });
  server.setRequestHandler(FollowRequestSchema, async (request) => {
    const { command_id, follow_id, from_byte } = request.params;
    if (follows.has(follow_id)) throw new Error(`follow_id ${JSON.stringify(follow_id)} is already in use.`);
    const send = boundedSender(connection, (bytes) => notify(ATTACH_METHODS.dropped, { follow_id, bytes }));
    follows.set(
      follow_id,
      service.followOutput(command_id, from_byte ?? 0, (read) => {
        const params = { follow_id, text: read.text, state: read.state };
        // The last piece (the command's end) is always sent: the follower waits for it.
        if (read.state !== 'running' && read.state !== 'awaiting_input')
          notify(ATTACH_METHODS.commandOutput, params);
        else send(read.text.length, () => notify(ATTACH_METHODS.commandOutput, params));
      }),
    );
    return {};
  });
  server.setRequestHandler(UnfollowRequestSchema, async (request) => {
    follows.get(request.params.follow_id)?.dispose();
    follows.delete(request.params.follow_id);
    return {};
  });
  return () => {
    for (const attachment of views.values()) attachment.detach();
    views.clear();
    for (const follow of follows.values()) follow.dispose();
    follows.clear();
  };
}
