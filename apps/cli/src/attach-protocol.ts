/**
 * The daemon's live-terminal methods for `conch attach`: MCP-compatible JSON-RPC on the same connection
 * as the tools (not a second protocol), requests from the client and notifications from the daemon. They
 * are daemon-only: they are not tools, so MCP clients never list them.
 *
 * - `conch/attach {session_id, cols?, rows?, take_over?, client_pid?}` → `{attach_id, input,
 *   read_only_reason?, screen, cursor}`: whether keystrokes are accepted, and the current screen to start
 *   the view with. From then on `notifications/conch/output {attach_id, data}` (base64 bytes as printed,
 *   conch's markers and typed wrapper lines removed) and, when the shell ends,
 *   `notifications/conch/closed {attach_id}`.
 * - `conch/input {attach_id, data}` (base64 keystrokes), `conch/resize {attach_id, cols, rows}`,
 *   `conch/detach {attach_id}` → `{}`.
 * - `conch/follow {command_id, follow_id, from_byte?}` → `{}`: one command's raw output as it arrives (how
 *   `conch exec` streams to a terminal), as `notifications/conch/command_output {follow_id, text, state}`
 *   from `from_byte` (default 0) on, the last one when the command has ended; `conch/unfollow {follow_id}`.
 */

import { randomUUID } from 'node:crypto';
import type { TerminalAttachment } from '@conch/core';
import { runsUnderConch } from '@conch/pty';
import type { ConchService } from '@conch/service';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import * as z from 'zod';
import { ATTACH_METHODS } from './attach-methods.js';

/** Method names of the attach protocol (defined apart from the schemas, see attach-methods.ts). */
export { ATTACH_METHODS };

const size = z.number().int().min(1).max(10_000);
/** `conch/attach` request. */
export const AttachRequestSchema = z.object({
  method: z.literal(ATTACH_METHODS.attach),
  params: z.object({
    session_id: z.string(),
    cols: size.optional(),
    rows: size.optional(),
    take_over: z.boolean().optional(),
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
/** An empty result. */
export const EmptyResultSchema = z.object({}).loose();

/**
 * Serves the attach methods on one daemon connection. Returns a function that detaches every view of
 * the connection (call it when the connection closes).
 */
export function serveAttach(server: Server, service: ConchService): () => void {
  const views = new Map<string, TerminalAttachment>();
  const follows = new Map<string, { dispose(): void }>();
  const view = (id: string): TerminalAttachment => {
    const found = views.get(id);
    if (!found) throw new Error(`Unknown attach_id ${JSON.stringify(id)}: attach first.`);
    return found;
  };
  server.setRequestHandler(AttachRequestSchema, async (request) => {
    const id = randomUUID();
    const { session_id, cols, rows, take_over, client_pid } = request.params;
    const attachment = service.attachTerminal(
      session_id,
      {
        onOutput: (bytes) => {
          void server
            .notification({
              method: ATTACH_METHODS.output,
              params: { attach_id: id, data: Buffer.from(bytes).toString('base64') },
            })
            .catch(() => {});
        },
        onClose: () => {
          views.delete(id);
          void server
            .notification({ method: ATTACH_METHODS.closed, params: { attach_id: id } })
            .catch(() => {});
        },
      },
      {
        takeOver: take_over === true,
        // A client that does not say who it is could be anything: treated as inside a conch terminal.
        fromConchTerminal: client_pid === undefined || runsUnderConch(client_pid),
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
      ...(screen === undefined ? {} : { cursor: screen.cursor }),
    };
  });
  server.setRequestHandler(InputRequestSchema, async (request) => {
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
    follows.set(
      follow_id,
      service.followOutput(command_id, from_byte ?? 0, (read) => {
        void server
          .notification({
            method: ATTACH_METHODS.commandOutput,
            params: { follow_id, text: read.text, state: read.state },
          })
          .catch(() => {});
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
