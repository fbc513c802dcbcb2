/**
 * The environment that points a sandboxed program at its sandbox's host-filtering proxy
 * (docs/sandbox.md "The rules and their defaults", `network`), on every platform.
 */

/** `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (both cases) set to `url`; `NO_PROXY` emptied. */
export function proxyEnvironment(url: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = '';
  env.no_proxy = '';
  return env;
}
