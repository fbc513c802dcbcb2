/**
 * Which conch server owns a container it created: labels naming the server instance (its pid and start
 * time, as `@conch/node` identifies instances), the machine (host name) and the machine's boot. A later
 * start on the same machine removes the containers whose owner is gone (reaping); containers created with
 * `keep`, and containers of other machines, are never touched.
 */

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  currentInstance,
  formatStartTime,
  isInstanceAlive,
  parseStartTimeField,
  type ServerInstance,
} from '@conch/node';

/** The labels conch puts on the containers it creates. */
export const LABELS = {
  /** `conch-<pid>-<start time>`: the owning server instance. */
  owner: 'io.conch.owner',
  /** The owner's host name. */
  host: 'io.conch.owner.host',
  /** The owner's boot id (`/proc/sys/kernel/random/boot_id`), so pids of an earlier boot are not compared. */
  boot: 'io.conch.owner.boot',
  /** `true` when created with `keep` (never removed by conch). */
  keep: 'io.conch.keep',
  /** The session's name as asked for (`name`), when one was given. */
  name: 'io.conch.name',
} as const;

/** The machine's boot id, or empty where it cannot be read. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** The owner labels of this server instance (plus `keep` when the container is to be kept). */
export function ownerLabels(keep: boolean): Record<string, string> {
  const me = currentInstance();
  return {
    [LABELS.owner]: `conch-${me.pid}-${formatStartTime(me.startTime)}`,
    [LABELS.host]: hostname(),
    [LABELS.boot]: bootId(),
    ...(keep ? { [LABELS.keep]: 'true' } : {}),
  };
}

function instanceOf(tag: string | undefined): ServerInstance | undefined {
  const match = /^conch-(\d+)-([a-z0-9]+)$/.exec(tag ?? '');
  return match ? { pid: Number(match[1]), startTime: parseStartTimeField(match[2] ?? '') } : undefined;
}

/**
 * True when a container with these labels was created by a conch server of this machine that no longer
 * runs (and not with `keep`): same host name and boot with a dead instance, or same host name and an
 * earlier boot.
 */
export async function isOrphan(labels: Readonly<Record<string, string>> | undefined): Promise<boolean> {
  if (!labels || labels[LABELS.keep] === 'true') return false;
  const owner = instanceOf(labels[LABELS.owner]);
  if (owner === undefined || labels[LABELS.host] !== hostname()) return false;
  const boot = bootId();
  if (labels[LABELS.boot] !== boot) return boot !== '';
  return !(await isInstanceAlive(owner));
}
