/**
 * `create_container`'s container: with `image`, a new container conch creates and owns (network `none`
 * unless asked, the mounts given, named after the session, labelled with its owner; removed when the
 * session closes unless `keep`); with `container`, a running container conch attaches to and leaves
 * running. Either way the result is a {@link ContainerDriver} in it, probed and ready for a session.
 *
 * Faults: an engine that cannot be reached is `CONTAINER_ENGINE_UNREACHABLE` naming where conch looked; an
 * image the engine does not have is `IMAGE_NOT_FOUND` naming it and how to pull it (conch never pulls);
 * a container that does not exist or does not run, a name that is taken, or mounts the engine refuses are
 * `INVALID_ARGUMENT` with the engine's words.
 */

import { randomBytes } from 'node:crypto';
import { type CONTAINER_NETWORKS, ConchError, ErrorCode } from '@conch/core';
import type Docker from 'dockerode';
import { ContainerDriver } from './container-driver.js';
import { type ContainerEngine, engineAnswer } from './engine.js';
import { bindOf, parseMount } from './mounts.js';
import { LABELS, ownerLabels } from './owner.js';

/** A network a created container joins. */
export type ContainerNetwork = (typeof CONTAINER_NETWORKS)[number];

/** What to open (the `create_container` parameters that concern the container). */
export interface OpenContainerOptions {
  /** Create a new container from this image. Give this or `container`. */
  image?: string | undefined;
  /** Attach to this running container (name or id). Give this or `image`. */
  container?: string | undefined;
  /** The working directory (created in a new container when missing). */
  workdir?: string | undefined;
  /** Bind mounts `HOST:PATH[:ro]` of a new container. */
  mounts?: readonly string[] | undefined;
  /** The network of a new container (default `none`). */
  network?: ContainerNetwork | undefined;
  /** The user the shell and commands run as (default: the container's). */
  user?: string | undefined;
  /** Leave a new container in place when the session closes (default false). */
  keep?: boolean | undefined;
  /** The session's name: a new container is called `conch-<name>`. */
  name?: string | undefined;
}

/** An open container: its driver, and what a session reports of it. */
export interface OpenedContainer {
  driver: ContainerDriver;
  /** The container's name. */
  container: string;
  /** Its image. */
  image: string;
  /** True when conch created it. */
  created: boolean;
}

/**
 * The first process of a container conch creates: a POSIX shell that sleeps, reaps the orphans that the
 * container's processes leave (a shell reaps every child it waits for), and ends at SIGTERM.
 */
export const KEEPALIVE_SCRIPT = 'trap "exit 0" TERM; while sleep 3600 & wait $!; do :; done';

function invalid(message: string, hint: string): ConchError {
  return new ConchError(ErrorCode.INVALID_ARGUMENT, message, { hint });
}

/** A container name from a session name: `conch-` and the name's allowed characters (else a random one). */
export function containerNameFor(sessionName: string | undefined): string {
  const cleaned = (sessionName ?? '').replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  const base = cleaned === '' ? randomBytes(5).toString('hex') : cleaned.slice(0, 60);
  return `conch-${base}`;
}

/** Opens the container of a container session (see the module doc). */
export async function openContainer(
  engine: ContainerEngine,
  options: OpenContainerOptions,
): Promise<OpenedContainer> {
  const { image, container } = options;
  if ((image === undefined) === (container === undefined)) {
    throw invalid(
      image === undefined
        ? 'create_container needs image or container.'
        : 'create_container takes image or container, not both.',
      'Give image to create a new container (e.g. "debian:12"), or container to attach to a running one (its name or id).',
    );
  }
  const mounts = (options.mounts ?? []).map(parseMount);
  if (container !== undefined && (mounts.length > 0 || options.network !== undefined)) {
    throw invalid(
      `mounts and network apply only to a container conch creates (image), not to the running container ${JSON.stringify(container)}.`,
      'Leave them out when attaching with container, or create a new container with image.',
    );
  }
  await engine.ping();
  return image !== undefined
    ? createFromImage(engine, image, mounts.map(bindOf), options)
    : attach(engine, container!, options);
}

async function createFromImage(
  engine: ContainerEngine,
  image: string,
  binds: string[],
  options: OpenContainerOptions,
): Promise<OpenedContainer> {
  try {
    await engine.request((docker) => docker.getImage(image).inspect());
  } catch (error) {
    if (engineAnswer(error)?.statusCode === 404) throw imageNotFound(engine, image);
    throw refused(engine, `look up the image ${JSON.stringify(image)}`, error);
  }
  const name = containerNameFor(options.name);
  const keep = options.keep === true;
  let created: Docker.Container;
  try {
    created = await engine.request((docker) =>
      docker.createContainer({
        name,
        Image: image,
        Entrypoint: ['/bin/sh', '-c', KEEPALIVE_SCRIPT],
        Cmd: [],
        Labels: {
          ...ownerLabels(keep),
          ...(options.name === undefined ? {} : { [LABELS.name]: options.name }),
        },
        ...(options.workdir === undefined ? {} : { WorkingDir: options.workdir }),
        ...(options.user === undefined ? {} : { User: options.user }),
        HostConfig: { NetworkMode: options.network ?? 'none', Binds: binds },
      }),
    );
  } catch (error) {
    const answer = engineAnswer(error);
    if (answer?.statusCode === 404) throw imageNotFound(engine, image);
    if (answer?.statusCode === 409) {
      throw invalid(
        `A container named ${name} already exists on the engine at ${engine.where}.`,
        `Give the session another name, attach to it with container "${name}", or remove it (docker rm -f ${name}).`,
      );
    }
    throw refused(engine, `create a container from ${JSON.stringify(image)}`, error);
  }
  const remove = () =>
    engine
      .request((_docker, abortSignal) => created.remove({ force: true, v: true, abortSignal }), 10_000)
      .catch(() => {});
  try {
    await engine.request(() => created.start());
  } catch (error) {
    await remove();
    throw refused(engine, `start a container from ${JSON.stringify(image)}`, error);
  }
  let driver: ContainerDriver;
  try {
    driver = await ContainerDriver.open({
      engine,
      container: created,
      name,
      image,
      user: options.user,
      removeOnDispose: !keep,
    });
  } catch (error) {
    // A kept container that cannot serve a session is no use either.
    await remove();
    throw error;
  }
  return { driver, container: name, image, created: true };
}

async function attach(
  engine: ContainerEngine,
  reference: string,
  options: OpenContainerOptions,
): Promise<OpenedContainer> {
  const found = (await engine.docker()).getContainer(reference);
  let info: Docker.ContainerInspectInfo;
  try {
    info = await engine.request(() => found.inspect());
  } catch (error) {
    if (engineAnswer(error)?.statusCode === 404) {
      throw invalid(
        `No container ${JSON.stringify(reference)} on the engine at ${engine.where}.`,
        'Give the name or id of a running container (docker ps lists them), or create one with image.',
      );
    }
    throw refused(engine, `look up the container ${JSON.stringify(reference)}`, error);
  }
  const name = info.Name.replace(/^\//, '');
  if (!info.State?.Running) {
    throw invalid(
      `Container ${name} is not running (${info.State?.Status ?? 'unknown state'}).`,
      `Start it first (docker start ${name}), or create a new container with image.`,
    );
  }
  const driver = await ContainerDriver.open({
    engine,
    container: found,
    name,
    image: info.Config?.Image ?? '',
    user: options.user,
    removeOnDispose: false,
  });
  return { driver, container: name, image: info.Config?.Image ?? '', created: false };
}

/** `IMAGE_NOT_FOUND` for `image`, with how to get it. */
function imageNotFound(engine: ContainerEngine, image: string): ConchError {
  return new ConchError(
    ErrorCode.IMAGE_NOT_FOUND,
    `Image ${JSON.stringify(image)} is not on the container engine at ${engine.where}.`,
    {
      hint: `Pull it first: docker pull ${image} (or podman pull ${image}), or build it; conch does not pull images. docker images lists the ones there.`,
      data: { image },
    },
  );
}

/** The engine said no (or failed): INVALID_ARGUMENT for a refusal of the request, with its words. */
function refused(engine: ContainerEngine, what: string, error: unknown): unknown {
  if (ConchError.is(error)) return error;
  const answer = engineAnswer(error);
  if (answer === undefined) return engine.unreachable(error);
  return new ConchError(
    answer.statusCode >= 500 && !/no such|not found|invalid|permission|denied|exist/i.test(answer.message)
      ? ErrorCode.INTERNAL
      : ErrorCode.INVALID_ARGUMENT,
    `The container engine at ${engine.where} could not ${what}: ${answer.message || `HTTP ${answer.statusCode}`}.`,
    {
      hint: "Check the image, mounts (the host paths must exist on the engine's machine), user and workdir.",
      data: { status: answer.statusCode },
      cause: error,
    },
  );
}
