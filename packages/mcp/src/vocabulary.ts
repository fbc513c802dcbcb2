/**
 * How the MCP face words the operations that core's and the drivers' hints point at: by tool name.
 */

import type { Vocabulary } from '@conch/core';

/** The MCP tool of each verb. */
export const MCP_VOCABULARY: Vocabulary = {
  createLocal: 'create_local',
  connectSsh: 'connect_ssh',
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
