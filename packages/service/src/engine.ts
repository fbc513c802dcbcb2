/**
 * Builds the local engine a stdio server runs on: the node-pty driver, the private spill-file store,
 * the xterm screen renderer and the SessionManager over them, configured from a ResolvedConfig.
 */

import {
  type AuditSink,
  type CommandPolicy,
  createRealClock,
  resolveSandboxRules,
  type SandboxHostFacts,
  type SandboxPolicy,
  SessionManager,
} from '@conch/core';
import { createXtermScreen, FileSpillStore } from '@conch/node';
import { createLocalDriver } from '@conch/pty';
import { engineDefaults, engineLimits, type ResolvedConfig } from './config.js';
import type { Logger } from './logger.js';
import { sandboxHostFacts } from './sandbox-options.js';

/** A policy and audit sink to hand to the engine (built from `config.policy`/`config.auditLog` by the caller). */
export interface EngineGuards {
  policy?: CommandPolicy;
  audit?: AuditSink;
}

/** The operator's sandbox policy, and the facts of this host a session's sandbox rules depend on. */
export interface SandboxSetup {
  policy: SandboxPolicy;
  /** The facts for a session whose cwd is `cwd` (absolute). */
  facts(cwd: string): SandboxHostFacts;
}

/** The engine and what it owns. */
export interface LocalEngine {
  manager: SessionManager;
  sandbox: SandboxSetup;
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
  // Other sessions' output (the spill files) is conch's own state: no sandbox reads it.
  const facts = (cwd: string) => sandboxHostFacts(cwd, [spill.dir]);
  const serverRules =
    config.sandbox.request === undefined
      ? undefined
      : resolveSandboxRules(config.sandbox.request, facts(config.cwd ?? process.cwd()));
  const manager = new SessionManager({
    clock: createRealClock(),
    localDriver: driver,
    spill,
    screen: createXtermScreen,
    limits: engineLimits(config),
    defaults: { ...engineDefaults(config), sandbox: serverRules },
    ...(guards.policy ? { policy: guards.policy } : {}),
    ...(guards.audit ? { audit: guards.audit } : {}),
    keepLogs: config.keepSpill,
  });
  let disposed = false;
  return {
    manager,
    sandbox: { policy: { rules: serverRules, required: config.sandbox.required }, facts },
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
