export { createLocalDriver, defaultOwnerTag, OWNER_ENV, type LocalDriver, type LocalDriverOptions } from './local-driver.js';
export { reapOrphans } from './orphan-reaper.js';
export { PtyProcess } from './pty-process.js';
export { killTree, collectTargets, type KillTargets } from './tree-killer.js';
