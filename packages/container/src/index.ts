/**
 * `@conch/container`: conch's container driver. `openContainer` creates a container from an image (or
 * attaches to a running one) on a Docker Engine API (Docker, Podman's service, a remote engine) and returns
 * a `ContainerDriver` (the core's `Driver` in it) for `SessionManager.openSession(driver, { kind:
 * 'container', … })`. `reapOrphanContainers` removes what a dead conch created. Where the engine is, and a
 * cheap ping, are in `@conch/container/engine`, which does not load the client library.
 */

/** The driver in one container. */
export { ContainerDriver, type ContainerTarget } from './container-driver.js';
/** One engine (dockerode, loaded on first use) and its errors. */
export { ContainerEngine, ENGINE_REQUEST_TIMEOUT_MS, engineAnswer, isUnreachable } from './engine.js';
/** Where the engine is (also `@conch/container/engine`). */
export {
  defaultEngineSockets,
  ENGINE_ADDRESS_FORMS,
  type EngineAddress,
  EngineAddressError,
  type EngineLocation,
  type EngineOrigin,
  isConfigured,
  locateEngine,
  parseEngineAddress,
  pingLocalEngine,
} from './engine-address.js';
/** One terminal exec (the driver's `TerminalProcess`) and how an engine's exit status reads. */
export { ContainerExecProcess, exitInfoOf } from './exec-process.js';
/** Bind mounts as `create_container` takes them. */
export { type BindMount, bindOf, MOUNT_FORM, parseMount } from './mounts.js';
/** Opening a container session's container. */
export {
  type ContainerNetwork,
  containerNameFor,
  KEEPALIVE_SCRIPT,
  type OpenContainerOptions,
  type OpenedContainer,
  openContainer,
} from './open-container.js';
/** The owner labels of the containers conch creates, and the orphan rule. */
export { isOrphan, LABELS, ownerLabels } from './owner.js';
/** Removal of the containers of dead conch servers. */
export { reapOrphanContainers } from './reap.js';
/** The helper shells that run the host scripts. */
export { ScriptHelper, ScriptHelpers, type ScriptResult, type StartHelper } from './script-helpers.js';
