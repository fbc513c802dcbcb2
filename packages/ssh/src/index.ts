/**
 * `@conch/ssh`: conch's SSH driver. `connectSsh` verifies the host key, authenticates and returns an
 * `SshDriver` (the core's `Driver` over ssh2) for `SessionManager.openSession(driver, { kind: 'ssh', … })`.
 */

/** One remote terminal channel (the driver's `TerminalProcess`). */
export { SshChannelProcess } from './channel-process.js';
/** Connects to a host (docs/tools.md `connect_ssh`); its options, result, host-key question and policies. */
export { type ConnectSshOptions, connectSsh, type SshConnection } from './connect.js';
export type { HostKeyQuestion } from './host-key-decision.js';
/** The host key policies (also `@conch/ssh/host-key-policies`, which does not load ssh2). */
export { HOST_KEY_POLICIES, type HostKeyPolicy } from './host-key-policies.js';
/** known_hosts: parsing, lookup, fingerprints, recording. */
export {
  appendKnownHost,
  checkHostKey,
  fingerprintOf,
  type HostKeyStatus,
  type KnownHostEntry,
  keyTypeOf,
  knownHostsName,
  loadKnownHosts,
  parseKnownHosts,
} from './known-hosts.js';
/** ssh client config resolution (aliases, ProxyJump) and `[user@]host[:port]` parsing. */
export {
  defaultConfigPath,
  type JumpSpec,
  parseHostSpec,
  type ResolvedHostConfig,
  resolveHostConfig,
} from './ssh-config.js';
/** The driver over one host, and the result of its `exec`. */
export { SshDriver, type SshExecOptions, type SshExecResult } from './ssh-driver.js';
