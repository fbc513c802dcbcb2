/**
 * `create_container` (docs/tools.md, docs/containers.md): the MCP face of the service's `createContainer`,
 * registered through the `ToolRegistrar` extension point only when the service offers container sessions
 * (an engine was configured, or one answered at a default place when the server started), so the default
 * listing does not grow for users without one.
 */

import type { SessionInfo } from '@conch/core';
import * as z from 'zod';
import { serviceCall } from './call-context.js';
import { zodShapeFor } from './parameter-schemas.js';
import { renderCreatedSession } from './render.js';
import { SessionSchema } from './schemas.js';
import type { ToolRegistrar } from './server.js';

/** A registrar that adds `create_container` when the service offers container sessions (nothing otherwise). */
export function containerTools(): ToolRegistrar {
  return ({ server, service, registerTool }) => {
    if (!service.canCreateContainers) return;
    registerTool({
      name: 'create_container',
      title: 'Open a shell session inside a container',
      description:
        'Open a persistent shell session inside a container (Docker Engine API: Docker, Podman) and return its ' +
        'session_id, which every command tool takes like a local one. With image, conch creates a container ' +
        '(no network unless network "bridge") and removes it at close_session unless keep; with container, it ' +
        'attaches to a running one and leaves it running. Errors: IMAGE_NOT_FOUND (conch never pulls), ' +
        'CONTAINER_ENGINE_UNREACHABLE. A container that stops makes the session "lost".',
      input: z.strictObject(zodShapeFor('create_container', service)),
      output: SessionSchema.shape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
      run: (args, { call }): Promise<SessionInfo> => service.createContainer(args, serviceCall(call, server)),
      render: (result: SessionInfo) => renderCreatedSession(result),
    });
  };
}
