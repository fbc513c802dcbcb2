/**
 * `@conch/core/host`: the building blocks every driver shares, pure like the rest of the core. The
 * environment markers conch tags processes with, the one rule for environment variable names, the signal
 * normaliser, the POSIX-sh scripts a driver runs on a host it reaches through a channel (SSH, a container
 * exec) with the readers of their reports, and the process-facts interface every driver reads through. See
 * docs/drivers.md.
 */

/** The one rule for environment variable names. */
export { assertEnvNames, ENV_NAME_RULE, isValidEnvName } from './environment.js';
/** The host scripts as operations over a driver's way to run a script. */
export {
  type HostKillOptions,
  type HostScriptPurpose,
  HostScripts,
  type RunHostScript,
} from './host-scripts.js';
/** A terminal on a host reached through a channel: start marker, probes, kills and signals, once. */
export {
  HostTerminalProcess,
  type StartOutcome,
  type StartPlace,
  startFailure,
  type TerminalHost,
} from './host-terminal-process.js';
/** The once-only "host is gone" signal of a driver. */
export { LostSignal } from './lost-signal.js';
/** The environment markers of conch's processes. */
export { COMMAND_MARKER, markerEntry, OWNER_MARKER, SESSION_MARKER } from './markers.js';
/** The names of a driver's private files. */
export { isPrivateFilePath, privateFilePath } from './private-files.js';
/** The one interface to a host's process facts, and the pure rules over a process table. */
export {
  descendantsOf,
  foregroundGroupOf,
  type HostProcess,
  isEndedState,
  isTerminalPath,
  LSOF_SOCKET_TYPES,
  type ProcessFacts,
  type ProcessFactsKind,
} from './process-facts.js';
/** Readers of the host scripts' reports. */
export {
  type ConnectProbe,
  defaultShellOf,
  type ProbeReport,
  parseConnectProbe,
  parseEscapedReport,
  parseKillReport,
  parseProbeReport,
} from './reports.js';
/** The host scripts themselves. */
export {
  CONNECT_PROBE,
  ESCAPED_SCRIPT,
  KILL_SCRIPT,
  PROBE_SCRIPT,
  SIGNAL_SCRIPT,
  START_FAILED_STATUS,
  START_MARKER_OSC,
  shCommand,
  startupScript,
} from './scripts.js';
/** Signal names as every driver spells them. */
export { normalizeSignal } from './signals.js';
