/**
 * The `create_container` sequence of the service, whatever face calls it: the session limit, the engine
 * (found once at start: `--docker-host`, the config file, `DOCKER_HOST`, else a local Docker or Podman
 * socket), `@conch/container`'s `openContainer` (loaded with its client library on the first call), and
 * handing the driver to the engine. A container conch created goes with its session (the driver removes
 * it unless `keep`); the containers of a dead conch are removed by the next start ({@link reapContainers}).
 *
 * Whether the tool is offered is decided once, at start ({@link locateContainerEngine}): an engine that
 * was configured is offered even when it does not answer yet (each call then says why); one found at a
 * default place is offered only when it answers a ping, so that users without an engine see no new tool.
 */

import { type EngineLocation, isConfigured, locateEngine, pingLocalEngine } from '@conch/container/engine';
import {
  type CONTAINER_NETWORKS,
  ConchError,
  ErrorCode,
  type SessionInfo,
  type SessionManager,
} from '@conch/core';
import type { ResolvedConfig } from './config.js';
import type { Logger } from './logger.js';
import { loadFailure, onDemand } from './on-demand.js';
import { assertRoomForSession } from './session-limit.js';

/** `create_container` parameters (plain JSON, the names of docs/tools.md). */
export interface CreateContainerParams {
  image?: string | undefined;
  container?: string | undefined;
  workdir?: string | undefined;
  mounts?: string[] | undefined;
  env?: Record<string, string> | undefined;
  network?: (typeof CONTAINER_NETWORKS)[number] | undefined;
  user?: string | undefined;
  shell?: string | undefined;
  keep?: boolean | undefined;
  cols?: number | undefined;
  rows?: number | undefined;
  name?: string | undefined;
}

/** The container engine of a service: where it is, and whether `create_container` is offered. */
export interface ContainerSetup {
  location: EngineLocation;
  offered: boolean;
}

/** How long the start-up ping of an engine found at a default place may take. */
const START_PING_MS = 1500;

/**
 * Where the engine of `config` is, and whether to offer `create_container` (see the module doc). Never
 * throws: a malformed `DOCKER_HOST` is logged and the tool not offered.
 */
export async function locateContainerEngine(config: ResolvedConfig, logger: Logger): Promise<ContainerSetup> {
  let location: EngineLocation;
  try {
    location = locateEngine(config.dockerHost);
  } catch (error) {
    logger.warn('create_container not offered', { error: (error as Error).message });
    return { location: { address: undefined, origin: 'environment', lookedAt: [] }, offered: false };
  }
  if (location.address === undefined) return { location, offered: false };
  if (isConfigured(location)) return { location, offered: true };
  const offered = await pingLocalEngine(location.address, START_PING_MS);
  if (!offered)
    logger.info('create_container not offered: no container engine answers', { at: location.address.text });
  return { location, offered };
}

type ContainerModule = typeof import('@conch/container');

/** `@conch/container` (and dockerode under it), loaded on the first use; a failed load is not cached. */
export const loadContainerDriver: () => Promise<ContainerModule> = onDemand(
  () => import('@conch/container'),
  (error) =>
    new ConchError(
      ErrorCode.INTERNAL,
      `The container driver could not be loaded (@conch/container, dockerode): ${loadFailure(error)}`,
      { hint: 'Reinstall conch; local sessions are unaffected.', cause: error },
    ),
);

/** One engine client per service (created on first use). */
export class ContainerSessions {
  readonly setup: ContainerSetup;
  #engine: Promise<InstanceType<ContainerModule['ContainerEngine']>> | undefined;

  constructor(setup: ContainerSetup) {
    this.setup = setup;
  }

  #client() {
    this.#engine ??= loadContainerDriver().then(
      ({ ContainerEngine }) => new ContainerEngine(this.setup.location),
    );
    return this.#engine;
  }

  /** Opens the container (created from `image`, or attached) and a session in it. */
  async open(manager: SessionManager, params: CreateContainerParams): Promise<SessionInfo> {
    assertRoomForSession(manager, 'no container was opened', 'try again');
    const { openContainer } = await loadContainerDriver();
    const engine = await this.#client();
    const opened = await openContainer(engine, {
      image: params.image,
      container: params.container,
      workdir: params.workdir,
      mounts: params.mounts,
      network: params.network,
      user: params.user,
      keep: params.keep,
      name: params.name,
    });
    try {
      const session = await manager.openSession(opened.driver, {
        kind: 'container',
        container: opened.container,
        image: opened.image,
        ...(params.workdir === undefined ? {} : { cwd: params.workdir }),
        ...(params.shell === undefined ? {} : { shell: params.shell }),
        ...(params.env === undefined ? {} : { env: params.env }),
        ...(params.cols === undefined ? {} : { cols: params.cols }),
        ...(params.rows === undefined ? {} : { rows: params.rows }),
        ...(params.name === undefined ? {} : { name: params.name }),
      });
      return session.toInfo();
    } catch (error) {
      await opened.driver.dispose().catch(() => {});
      throw error;
    }
  }

  /** Removes the containers dead conch servers left (in the background at start); resolves with their names. */
  async reap(logger: Logger): Promise<void> {
    try {
      const { reapOrphanContainers } = await loadContainerDriver();
      const removed = await reapOrphanContainers(await this.#client());
      if (removed.length > 0) logger.info('removed containers left by a dead conch', { containers: removed });
    } catch (error) {
      logger.debug('reaping orphaned containers failed', { error: String(error) });
    }
  }
}
