/**
 * Derived schemas kept per source object: the daemon gives every connection its own MCP server with the same
 * tools, and deriving their schemas again (zod objects, JSON Schema) took most of a short `conch` command's
 * time in the daemon. zod schemas are immutable, so one derived schema can serve every server.
 */

/** The value cached for `key` in `cache`, made by `make` the first time. */
export function cached<K extends object, V>(cache: WeakMap<K, V>, key: K, make: () => V): V {
  if (cache.has(key)) return cache.get(key) as V;
  const value = make();
  cache.set(key, value);
  return value;
}
