/**
 * Errors as MCP tool results (docs/tools.md): `isError`, one actionable text block, and
 * `structuredContent.error` with the code, message, hint and data. Used by the tool kit for every tool and
 * by the transports for arguments they refuse before any tool runs.
 */

import { toConchError, type Vocabulary } from '@conch/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderError } from './render.js';
import type { ErrorInfo } from './schemas.js';
import { MCP_VOCABULARY } from './vocabulary.js';

/** The docs/tools.md wire shape of any error (data made JSON-safe), its hint worded with `vocabulary`. */
export function errorInfo(error: unknown, vocabulary: Vocabulary = MCP_VOCABULARY): ErrorInfo {
  const conch = toConchError(error);
  const json = conch.toJSON(vocabulary);
  const info: ErrorInfo = { code: json.code, message: json.message };
  if (json.hint !== undefined) info.hint = json.hint;
  if (json.data !== undefined) {
    try {
      info.data = JSON.parse(JSON.stringify(json.data)) as Record<string, unknown>;
    } catch {
      // Data that cannot be serialised is dropped rather than breaking the result.
    }
  }
  return info;
}

/** An MCP error result: `isError`, one actionable text block and `structuredContent.error`. */
export function errorResult(error: unknown, vocabulary: Vocabulary = MCP_VOCABULARY): CallToolResult {
  const info = errorInfo(error, vocabulary);
  return {
    isError: true,
    content: [{ type: 'text', text: renderError(info) }],
    structuredContent: { error: info },
  };
}
