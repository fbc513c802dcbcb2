import { ConchError, createRealClock, ErrorCode, hint, VERBS, verb } from '@conch/core';
import { FakeDriver } from '@conch/core/testing';
import { ConchService } from '@conch/service';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, test } from 'vitest';
import { errorInfo } from './error-result.js';
import { createConchServer } from './server.js';
import { MCP_VOCABULARY, VOCABULARY_CAPABILITY } from './vocabulary.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A client connected in process to a server over a service on the core's scripted FakeDriver. */
async function connect(capabilities: ClientCapabilities): Promise<Client> {
  const clock = createRealClock();
  const service = new ConchService({ engine: { clock, localDriver: new FakeDriver({ clock }) } });
  const conch = createConchServer({ service });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await conch.server.connect(serverSide);
  const client = new Client({ name: 'unit', version: '0' }, { capabilities });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await conch.close();
  });
  return client;
}

const hintOf = (r: CallToolResult) => (r.structuredContent as { error: { hint?: string } }).error.hint;

/** A vocabulary of the CLI's kind: commands, not tool names. */
const SHELL_WORDS = Object.fromEntries(VERBS.map((v) => [v, `tool ${v.toLowerCase()}`]));

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

  test('a client that declares its vocabulary gets hints in its words; others get tool names', async () => {
    const plain = await connect({});
    const declared = await connect({ experimental: { [VOCABULARY_CAPABILITY]: SHELL_WORDS } });
    const call = { name: 'read_output', arguments: { command_id: 'c_nosuchid00' } };
    const mcp = (await plain.callTool(call)) as CallToolResult;
    const own = (await declared.callTool(call)) as CallToolResult;
    expect(hintOf(mcp)).toMatch(/; list_processes shows valid ids\.$/);
    expect(hintOf(own)).toMatch(/; tool listprocesses shows valid ids\.$/);
    expect(hintOf(own)).not.toMatch(/list_processes/);
  });

  test('an invalid declared vocabulary (a verb missing, a word too long, not a string) falls back to tool names', async () => {
    const { killProcess: _dropped, ...missing } = SHELL_WORDS;
    const long = { ...SHELL_WORDS, listProcesses: 'x'.repeat(101) };
    for (const words of [missing, long, { ...SHELL_WORDS, execute: 42 }]) {
      const client = await connect({ experimental: { [VOCABULARY_CAPABILITY]: words as object } });
      const r = (await client.callTool({
        name: 'read_output',
        arguments: { command_id: 'c_nosuchid00' },
      })) as CallToolResult;
      expect(hintOf(r)).toMatch(/list_processes shows valid ids/);
    }
  });
});
