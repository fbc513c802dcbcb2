/**
 * Removes the containers a dead conch server created: those labelled with an owner instance of this
 * machine that no longer runs (see `owner.ts`), unless created with `keep`. Run at a server's start, in the
 * background: a server SIGKILLed cannot remove its containers itself, the next one does.
 */

import type { ContainerEngine } from './engine.js';
import { isOrphan, LABELS } from './owner.js';

/** Removes the orphaned containers on `engine`; resolves with their names. */
export async function reapOrphanContainers(engine: ContainerEngine): Promise<string[]> {
  const listed = await engine.request((docker, abortSignal) =>
    docker.listContainers({ all: true, filters: { label: [LABELS.owner] }, abortSignal }),
  );
  const removed: string[] = [];
  for (const entry of listed) {
    if (!(await isOrphan(entry.Labels))) continue;
    const name = (entry.Names?.[0] ?? entry.Id).replace(/^\//, '');
    try {
      await engine.request(
        (docker, abortSignal) => docker.getContainer(entry.Id).remove({ force: true, v: true, abortSignal }),
        20_000,
      );
      removed.push(name);
    } catch {
      // removed meanwhile, or the engine refused: the next start tries again
    }
  }
  return removed;
}
