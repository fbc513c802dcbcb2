/**
 * The direct path of `tools/call`: a transport wrapper that hands a well-formed call of a conch tool
 * straight to the tool's handler, and everything else to the MCP SDK as before.
 *
 * Why: through the SDK's request handling a `tools/call` goes through seven zod parses (three to learn the message's kind,
 * the request schema, the SDK's own input and output checks, and the result envelope) before and after
 * conch's handler, which already parses the arguments with the tool's strict schema and checks its result
 * against the exact output schema. When calls are spaced out, as an agent's are, every piece of code a call
 * touches is cold, and these parses were the largest part of the server's own time per call
 * (docs/performance.md).
 *
 * What takes the direct path: a request `tools/call` from an initialized client, naming a tool that conch's
 * tool kit registered and that is enabled, whose `params` has no `task`, and whose `arguments` (if any) and
 * `_meta` (if any) are plain objects. It gets exactly what the SDK's request handling gives it: the same handler, the
 * request's id, its `_meta` (progress token), an abort signal that `notifications/cancelled` and the
 * connection's close abort (after which, as through the SDK, nothing is answered), progress notifications
 * sent through the server, and a thrown error answered as an error result. Anything else (initialize,
 * tools/list, other tools, malformed requests, task-augmented calls) goes through the SDK's request handling unchanged.
 */

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { isJsonObject } from './json.js';
import { conchToolHandler, type ToolHandlerExtra } from './tool-kit.js';

type Id = string | number;

/**
 * Wraps `transport` so that conch's tool calls skip the SDK's generic request handling (see the module
 * doc). Connect the server to the returned transport; the wrapped one keeps its own methods.
 */
export function withDirectToolCalls(server: McpServer, transport: Transport): Transport {
  return new DirectToolCallTransport(server, transport);
}

/** The wrapper behind {@link withDirectToolCalls}. */
class DirectToolCallTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  /** Calls on the direct path that have not answered yet, by request id. */
  private readonly running = new Map<Id, AbortController>();

  constructor(
    private readonly server: McpServer,
    private readonly inner: Transport,
  ) {
    inner.onmessage = (message, extra) => {
      if (!this.take(message)) this.onmessage?.(message, extra);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      for (const controller of this.running.values()) controller.abort();
      this.running.clear();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Runs the message on the direct path when it qualifies; false hands it to the SDK. */
  private take(message: JSONRPCMessage): boolean {
    const m = message as { method?: unknown; id?: unknown; params?: unknown };
    if (m.method === 'notifications/cancelled') {
      const requestId = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        this.running.get(requestId)?.abort();
        this.running.delete(requestId);
      }
      return false;
    }
    if (m.method !== 'tools/call' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return false;
    const params = m.params;
    if (!isJsonObject(params) || typeof params.name !== 'string' || params.task !== undefined) return false;
    if (params.arguments !== undefined && !isJsonObject(params.arguments)) return false;
    if (params._meta !== undefined && !isJsonObject(params._meta)) return false;
    if (this.server.server.getClientCapabilities() === undefined) return false;
    const handler = conchToolHandler(this.server, params.name);
    if (handler === undefined) return false;
    this.run(m.id, handler, params);
    return true;
  }

  private run(
    id: Id,
    handler: NonNullable<ReturnType<typeof conchToolHandler>>,
    params: Record<string, unknown>,
  ): void {
    const controller = new AbortController();
    this.running.set(id, controller);
    const extra: ToolHandlerExtra = {
      signal: controller.signal,
      requestId: id,
      _meta: params._meta as ToolHandlerExtra['_meta'],
      sendNotification: async (notification) => {
        if (controller.signal.aborted) return;
        await this.server.server.notification(notification, { relatedRequestId: id });
      },
    };
    handler(params.arguments, extra)
      .catch((error: unknown) => ({
        content: [{ type: 'text' as const, text: error instanceof Error ? error.message : String(error) }],
        isError: true,
      }))
      .then((result) => {
        if (controller.signal.aborted) return;
        this.running.delete(id);
        return this.inner.send({ jsonrpc: '2.0', id, result } as JSONRPCMessage);
      })
      .catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }
}
