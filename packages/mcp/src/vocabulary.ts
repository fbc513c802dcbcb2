/**
 * How the MCP face words the operations that core's and the drivers' hints point at: by tool name, unless
 * the client declared its own words (the `conch` CLI, a client of the daemon, says `conch kill`).
 */

import { VERBS, type Vocabulary } from '@conch/core';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** The MCP tool of each verb. */
export const MCP_VOCABULARY: Vocabulary = {
  createLocal: 'create_local',
  connectSsh: 'connect_ssh',
  createContainer: 'create_container',
  listSessions: 'list_sessions',
  closeSession: 'close_session',
  execute: 'execute',
  readOutput: 'read_output',
  respond: 'respond',
  sendControl: 'send_control',
  listProcesses: 'list_processes',
  killProcess: 'kill_process',
  checkCommand: 'check_command',
};

/**
 * The experimental client capability under which a client declares how it names the operations (a
 * {@link Vocabulary}: one command per verb). The server then words hints, errors and the omission notice
 * of that connection in those words.
 */
export const VOCABULARY_CAPABILITY = 'conch/vocabulary';

/** True for a vocabulary a client may declare: a name of at most 100 characters for every verb. */
export function isVocabulary(value: unknown): value is Vocabulary {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const words = value as Record<string, unknown>;
  return VERBS.every((verb) => {
    const word = words[verb];
    return typeof word === 'string' && word.length > 0 && word.length <= 100;
  });
}

/** The vocabulary of each client's capabilities, checked once per connection. */
const declaredWords = new WeakMap<object, Vocabulary>();

/** The words of a connection: the client's declared vocabulary if valid, else {@link MCP_VOCABULARY}. */
export function vocabularyOf(server: McpServer): Vocabulary {
  const capabilities = server.server.getClientCapabilities();
  if (capabilities?.experimental === undefined) return MCP_VOCABULARY;
  let words = declaredWords.get(capabilities);
  if (words === undefined) {
    const declared = capabilities.experimental[VOCABULARY_CAPABILITY];
    words = isVocabulary(declared)
      ? (Object.freeze(Object.fromEntries(VERBS.map((verb) => [verb, declared[verb]]))) as Vocabulary)
      : MCP_VOCABULARY;
    declaredWords.set(capabilities, words);
  }
  return words;
}
