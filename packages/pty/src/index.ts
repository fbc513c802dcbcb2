export { runsUnderConch } from './conch-process.js';
export {
  createLocalDriver,
  defaultOwnerTag,
  type LocalDriver,
  type LocalDriverOptions,
  OWNER_ENV,
} from './local-driver.js';
export { reapOrphans } from './orphan-reaper.js';
export { PtyProcess } from './pty-process.js';
export { collectTargets, type KillTargets, killTree } from './tree-killer.js';
