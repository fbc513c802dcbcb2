/**
 * @conch/cli — the `conch` command line and its per-user daemon. The binary is `bin.ts`; this entry lets
 * other programs run the CLI, the daemon, or connect to the daemon as an MCP client.
 */

/** The daemon process. */
export { type DaemonOptions, runDaemon } from './daemon.js';
/** Finding, starting, connecting to and stopping the daemon. */
export {
  connectDaemon,
  type DaemonConnection,
  type DaemonStart,
  type DaemonStatus,
  daemonStatus,
  ensureDaemon,
  openDaemonSocket,
  stopDaemon,
} from './daemon-client.js';
/** The daemon's own methods besides attach's: who answers, and the relay's announcement. */
export { DAEMON_METHODS, type DaemonIdentity, isDaemonOnlyMethod } from './daemon-methods.js';
/** Whether the daemon answers, who it is, its recorded pid, and what an earlier one left (without loading it). */
export {
  askDaemonIdentity,
  isDaemonProcess,
  previousDaemon,
  readDaemonPid,
  socketAnswers,
} from './daemon-probe.js';
/** Where the daemon's socket, pid file and log live. */
export { type DaemonPaths, daemonDir, daemonPaths, ensurePrivateDir } from './paths.js';
/** The `conch` program. */
export { buildProgram, EXIT_ERROR, EXIT_USAGE, runCli } from './program.js';
/** The CLI's version. */
export { CLI_VERSION } from './version.js';
