/**
 * The MCP face's side of the service's call context: the request's abort signal and progress (from the
 * tool kit's `call`), and `ask` answered through MCP elicitation when the client declared it.
 */

import type { CallContext } from '@conch/core';
import type { ServiceCallContext, ServiceQuestion } from '@conch/service';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** Why the MCP face cannot ask the person (ends a sentence). */
const CANNOT_ELICIT = 'this MCP client does not support elicitation';

/** True when the connected client can answer a form elicitation (an empty `elicitation: {}` means form). */
export function clientCanElicit(server: McpServer): boolean {
  const elicitation = server.server.getClientCapabilities()?.elicitation;
  return elicitation !== undefined && elicitation.form !== undefined;
}

/** Asks the person a yes/no question through MCP elicitation; true only for an explicit accept. */
async function elicitConfirmation(
  server: McpServer,
  question: ServiceQuestion,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const answer = await server.server.elicitInput(
    {
      mode: 'form',
      message: question.message,
      requestedSchema: {
        type: 'object',
        properties: {
          accept: {
            type: 'boolean',
            title: question.confirm,
            description: question.detail,
            default: false,
          },
        },
        required: ['accept'],
      },
    },
    { timeout: question.timeoutMs, ...(signal ? { signal } : {}) },
  );
  return answer.action === 'accept' && answer.content?.accept === true;
}

/**
 * The service call context of a tool call: cancellation, progress and the connection's words from the
 * request, and (given the server) `ask` through elicitation when the client can answer it.
 */
export function serviceCall(call: CallContext, server?: McpServer): ServiceCallContext {
  if (server === undefined) return call;
  if (!clientCanElicit(server)) return { ...call, cannotAsk: CANNOT_ELICIT };
  const abort = call.signal instanceof AbortSignal ? call.signal : undefined;
  return { ...call, ask: (question) => elicitConfirmation(server, question, abort) };
}
