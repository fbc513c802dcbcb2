import { ConchError, ErrorCode, hint, VERBS, verb } from '@conch/core';
import { describe, expect, test } from 'vitest';
import { errorInfo } from './tool-kit.js';
import { MCP_VOCABULARY } from './vocabulary.js';

describe('MCP wording of face-neutral hints', () => {
  test('every verb has a distinct MCP tool name', () => {
    const names = VERBS.map((v) => MCP_VOCABULARY[v]);
    expect(new Set(names).size).toBe(VERBS.length);
    expect(MCP_VOCABULARY.killProcess).toBe('kill_process');
  });

  test('error results word verb references as tool names', () => {
    const error = new ConchError(ErrorCode.LIMIT_REACHED, 'Too many.', {
      hint: hint`Kill finished-with background commands with ${verb('killProcess')} (${verb('listProcesses')} shows them).`,
    });
    expect(errorInfo(error).hint).toBe(
      'Kill finished-with background commands with kill_process (list_processes shows them).',
    );
  });
});
