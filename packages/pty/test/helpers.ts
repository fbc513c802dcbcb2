/**
 * The local driver's test setup: a session manager over a new local driver, with a private working
 * directory as the sessions' default cwd.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineDefaults, SessionManager } from '@conch/core';
import { createTestManager } from '@conch/node/testing';
import { createLocalDriver, type LocalDriver } from '../src/index.js';

/** A local engine of a test file, and how to end it. */
export interface LocalTestEngine {
  /** A new directory under the system's temporary directory, the sessions' default cwd. */
  readonly work: string;
  readonly driver: LocalDriver;
  readonly manager: SessionManager;
  /** Shuts the manager down, disposes the driver and removes the spill files and `work`. */
  close(): Promise<void>;
}

/**
 * Starts a session manager ({@link createTestManager}) over a new local driver, with `work` (a new
 * directory named `prefix…`) as the default cwd, and `defaults` besides.
 */
export function startLocalEngine(prefix: string, defaults: Partial<EngineDefaults> = {}): LocalTestEngine {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const driver = createLocalDriver();
  const { manager, close } = createTestManager({ localDriver: driver, defaults: { cwd: work, ...defaults } });
  return {
    work,
    driver,
    manager,
    close: async () => {
      await close();
      await driver.dispose();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
