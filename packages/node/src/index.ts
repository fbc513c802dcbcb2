/**
 * @conch/node — Node.js implementations of the core's host interfaces, shared by the local and SSH
 * drivers and the faces: the host's process facts (`ProcessFacts`: `/proc` or `ps`), the private spill-file
 * store (`SpillStore`) and the `@xterm/headless` screen renderer (`ScreenRenderer`).
 */

/** V8's compile cache for the bins (Node 22.1+; nothing on Node 20), in a private directory. */
export { compileCacheDir, enableCompileCache } from './compile-cache.js';
/** Options for {@link FileSpillStore}: directory, per-command cap, write batch size. */
export type { FileSpillStoreOptions } from './file-spill-store.js';
/** The core's `SpillStore` on the local disk: one 0600 file per command in a private 0700 directory. */
/** One command's spill file, as returned by {@link FileSpillStore.create}. */
/** Default per-command spill cap: 256 MiB. */
/** Every how many lines the spill file's sparse index records an offset (256). */
export {
  DEFAULT_SPILL_CAP_BYTES,
  FileSpillSink,
  FileSpillStore,
  SPILL_INDEX_INTERVAL,
} from './file-spill-store.js';
/** Expands a leading `~`/`~/` in a user-given path to the home directory. */
export { expandHomePath } from './home-path.js';
/** The Linux process facts (`/proc`), the portable ones (`ps`, `lsof`), and the choice between them. */
export { ProcProcessFacts } from './process-facts/proc-facts.js';
export { PsProcessFacts } from './process-facts/ps-facts.js';
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
/** Options for {@link XtermScreenRenderer} (scrollback). */
export type { XtermScreenOptions } from './xterm-screen.js';
/** The core's `ScreenRenderer` built on `@xterm/headless`. */
/** The core's `ScreenFactory`: `(cols, rows) => new XtermScreenRenderer(cols, rows)`. */
/** Clamps a terminal dimension to 1..1000. */
/** Largest accepted number of columns or rows (1000). */
/** Default emulator scrollback in lines (1000). */
/** Bytes the emulator may fall behind before output is dropped from the screen view (16 MiB). */
export {
  clampScreenDimension,
  createXtermScreen,
  DEFAULT_SCREEN_SCROLLBACK,
  MAX_PENDING_SCREEN_BYTES,
  MAX_SCREEN_DIMENSION,
  XtermScreenRenderer,
} from './xterm-screen.js';
