/**
 * @conch/node — Node.js implementations of the core's host interfaces, shared by the local and SSH
 * drivers and the faces: the host's process facts (`ProcessFacts`: `/proc` or `ps`), the private spill-file
 * store (`SpillStore`), the `@xterm/headless` screen renderer (`ScreenRenderer`), the identity of a server
 * instance, and home-path expansion.
 */

/** V8's compile cache for the bins (Node's own on 22.1+, the bins' chunks on Node 20), in a private directory. */
export {
  type CompileCacheStats,
  compileCacheDir,
  compileCacheStats,
  enableCompileCache,
} from './compile-cache.js';
/** Options for {@link FileSpillStore}: directory, per-command cap, write batch size. */
export type { FileSpillStoreOptions } from './file-spill-store.js';
/**
 * The core's `SpillStore` on the local disk (`FileSpillStore`: one 0600 file per command in a private 0700
 * directory), one command's spill file (`FileSpillSink`), the default per-command cap (256 MiB) and how
 * often the spill file's sparse index records an offset (every 256 lines).
 */
export {
  DEFAULT_SPILL_CAP_BYTES,
  FileSpillSink,
  FileSpillStore,
  SPILL_INDEX_INTERVAL,
} from './file-spill-store.js';
/** Expands a leading `~`/`~/` in a user-given path to the home directory. */
export { expandHomePath } from './home-path.js';
/** The Linux process facts (`/proc`). */
export { ProcProcessFacts } from './process-facts/proc-facts.js';
/** The portable process facts (`ps`, `lsof`). */
export { PsProcessFacts } from './process-facts/ps-facts.js';
/** The choice between them (`CONCH_PROCESS_FACTS`), and this host's process facts. */
export {
  chooseProcessFactsKind,
  createProcessFacts,
  PROCESS_FACTS_CHOICES,
  PROCESS_FACTS_ENV,
  processFacts,
  processFactsOverride,
} from './process-facts/select-facts.js';
/** A server instance (pid and start time), as owner of processes and private directories. */
export type { ServerInstance } from './server-instance.js';
/** Instance identity, liveness and the marker of private directories; removal of dead instances' dirs. */
export {
  currentInstance,
  formatStartTime,
  INSTANCE_MARKER,
  isInstanceAlive,
  markInstanceDir,
  parseStartTimeField,
  processStartTime,
  readInstanceMarker,
  removeDeadInstanceDirs,
  unmarkInstanceDir,
} from './server-instance.js';
/** The start of a server bin (compile cache, its main loaded lazily, its exit code), and a bin's fatal-error line. */
export { fatalLine, type ServerMain, startServerBin } from './start-server-bin.js';
/** Options for {@link XtermScreenRenderer} (scrollback). */
export type { XtermScreenOptions } from './xterm-screen.js';
/**
 * The core's `ScreenRenderer` built on `@xterm/headless` (`XtermScreenRenderer`) and its `ScreenFactory`
 * (`createXtermScreen`), the clamp of a terminal dimension to 1..`MAX_SCREEN_DIMENSION` (1000), the default
 * scrollback (1000 lines) and how far the emulator may fall behind before output is dropped from the
 * screen view (16 MiB).
 */
export {
  clampScreenDimension,
  createXtermScreen,
  DEFAULT_SCREEN_SCROLLBACK,
  MAX_PENDING_SCREEN_BYTES,
  MAX_SCREEN_DIMENSION,
  XtermScreenRenderer,
} from './xterm-screen.js';
