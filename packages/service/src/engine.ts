/**
 * Builds the local engine a stdio server runs on: the node-pty driver, the private spill-file store,
 * the xterm screen renderer and the SessionManager over them, configured from a ResolvedConfig.
 */

import { type AuditSink, type CommandPolicy, createRealClock, SessionManager } from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { createLocalDriver } from '@conch/pty';
import { engineDefaults, engineLimits, type ResolvedConfig } from './config.js';
import type { Logger } from './logger.js';

/** A policy and audit sink to hand to the engine (built from `config.policy`/`config.auditLog` by the caller). */
export interface EngineGuards {
  policy?: CommandPolicy;
  audit?: AuditSink;
}

/** The engine and what it owns. */
export interface LocalEngine {
  manager: SessionManager;
  /** Removes the spill files (unless `keepSpill`) and releases the driver. Call after `manager.shutdown()`. */
  dispose(): Promise<void>;
}

/** Creates the local engine (see the module doc). */
export function createLocalEngine(
  config: ResolvedConfig,
  logger: Logger,
  guards: EngineGuards = {},
): LocalEngine {
  const driver = createLocalDriver();
  const spill = new FileSpillStore(config.spillDir === undefined ? {} : { dir: config.spillDir });
  const manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    spill,
    screen: createXtermScreen,
    limits: engineLimits(config),
    defaults: engineDefaults(config),
    ...(guards.policy ? { policy: guards.policy } : {}),
    ...(guards.audit ? { audit: guards.audit } : {}),
    keepLogs: config.keepSpill,
  });
  let disposed = false;
  return {
    manager,
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        spill.dispose(!config.keepSpill);
      } catch (error) {
        logger.warn('removing spill files failed', { error: String(error) });
      }
      try {
        await driver.dispose();
      } catch (error) {
        logger.warn('releasing the local driver failed', { error: String(error) });
      }
    },
  };
}
