/**
 * Bind mounts as `create_container` takes them: `"HOST:PATH"` or `"HOST:PATH:ro"` (`:rw` is the default),
 * both absolute paths. HOST is a path on the engine's machine (this one, for a local engine).
 */

import { ConchError, ErrorCode } from '@conch/core';

/** One bind mount. */
export interface BindMount {
  host: string;
  path: string;
  readOnly: boolean;
}

/** The form of a mount, for messages. */
export const MOUNT_FORM = '"HOST:PATH" or "HOST:PATH:ro" (absolute paths; HOST on the engine\'s machine)';

/** Parses one mount; INVALID_ARGUMENT naming it and the form when it is malformed. */
export function parseMount(text: string): BindMount {
  const invalid = (why: string) =>
    new ConchError(ErrorCode.INVALID_ARGUMENT, `Invalid mount ${JSON.stringify(text)}: ${why}.`, {
      hint: `Give each mount as ${MOUNT_FORM}, e.g. "/home/ada/project:/work" or "/etc/ssl:/etc/ssl:ro".`,
    });
  if (typeof text !== 'string' || /[\u0000-\u001f]/.test(text)) throw invalid('it holds control characters');
  const parts = text.split(':');
  let mode: string | undefined;
  if (parts.length === 3) mode = parts.pop();
  if (parts.length !== 2) throw invalid('expected HOST:PATH with an optional :ro or :rw');
  const [host = '', path = ''] = parts;
  if (mode !== undefined && mode !== 'ro' && mode !== 'rw') throw invalid(`unknown mode ":${mode}"`);
  if (!host.startsWith('/')) throw invalid(`the host path ${JSON.stringify(host)} is not absolute`);
  if (!path.startsWith('/')) throw invalid(`the container path ${JSON.stringify(path)} is not absolute`);
  return { host, path, readOnly: mode === 'ro' };
}

/** The engine's `HostConfig.Binds` entry of a mount. */
export function bindOf(mount: BindMount): string {
  return `${mount.host}:${mount.path}:${mount.readOnly ? 'ro' : 'rw'}`;
}
