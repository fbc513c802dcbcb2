/**
 * A module loaded on first use rather than at start-up (a driver and the client library under it): a
 * server that never uses it does not hold it. A failed load is not cached (the next call tries again) and
 * is reported as the caller's error.
 */

/** Returns a loader that imports once through `load`, turning a failure into `failure(error)`. */
export function onDemand<T>(load: () => Promise<T>, failure: (error: unknown) => unknown): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw failure(error);
    });
    return loading;
  };
}

/** The message of a failed import, for the errors of {@link onDemand}. */
export function loadFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
