/**
 * conch's engine as the tests of the real drivers run it on this machine: the real clock, the
 * `@xterm/headless` screen and a private spill store, for a session manager of their own
 * ({@link createTestManager}) or for the core's driver suites ({@link withNodeHost}).
 */
import { createRealClock, type Driver, type EngineDefaults, SessionManager } from '@conch/core';
import { FileSpillStore } from '../file-spill-store.js';
import { createXtermScreen } from '../xterm-screen.js';
import { countWithCommandId } from './proc.js';

/** A session manager of a test, and how to end it. */
export interface TestManager {
  readonly manager: SessionManager;
  /** Shuts the manager down and removes its spill files; the test disposes its drivers itself. */
  close(): Promise<void>;
}

/**
 * A {@link SessionManager} on the real clock, with the xterm screen and a private spill store, over
 * `localDriver` when given (sessions on other drivers are opened with `manager.openSession`), with the
 * test's `defaults`.
 */
export function createTestManager(
  options: { localDriver?: Driver; defaults?: Partial<EngineDefaults> } = {},
): TestManager {
  const spill = new FileSpillStore({});
  const manager = new SessionManager({
    clock: createRealClock(),
    ...(options.localDriver ? { localDriver: options.localDriver } : {}),
    screen: createXtermScreen,
    spill,
    ...(options.defaults ? { defaults: options.defaults } : {}),
  });
  return {
    manager,
    close: async () => {
      await manager.shutdown();
      spill.dispose(true);
    },
  };
}

/** What {@link withNodeHost} adds to a driver suite's setup. */
export interface NodeHost {
  /** A new private spill store (the suite makes one), removed with its files after the suite. */
  spill: () => FileSpillStore;
  screen: typeof createXtermScreen;
  /** Live processes on this machine whose environment carries CONCH_COMMAND_ID=id. */
  countWithCommandId: (commandId: string) => Promise<number>;
  /** The setup's own teardown, then the spill store's removal. */
  teardown: () => Promise<void>;
}

/**
 * The setup of one of the core's driver suites (`describeDriverConformance`, `describeOutputCompleteness`)
 * for a driver whose processes run on this machine: `setup` (the driver, its kind and its own teardown)
 * with this machine's spill store, screen and process count.
 */
export function withNodeHost<const S extends { teardown?: () => Promise<void> }>(
  setup: S,
): Omit<S, keyof NodeHost> & NodeHost {
  let spill: FileSpillStore | undefined;
  return {
    ...setup,
    spill: () => {
      spill = new FileSpillStore({});
      return spill;
    },
    screen: createXtermScreen,
    countWithCommandId: async (id) => countWithCommandId(id),
    teardown: async () => {
      await setup.teardown?.();
      spill?.dispose(true);
    },
  };
}
