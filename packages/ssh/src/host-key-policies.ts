/**
 * The host key policies of `connect_ssh` (docs/tools.md), on their own so that what only validates or lists
 * them (configuration, CLI options, tool schemas) does not load the SSH driver and ssh2
 * (`@conch/ssh/host-key-policies`).
 */

/**
 * How host keys are checked (docs/tools.md). A known key must match under every policy: a changed (or `@revoked`)
 * key is refused by all of them, `insecure` included; the policies differ only on unknown keys.
 */
export type HostKeyPolicy = 'ask' | 'accept-new' | 'strict' | 'insecure';

/** Every host key policy (the default first, the weakest last). */
export const HOST_KEY_POLICIES: readonly HostKeyPolicy[] = ['ask', 'accept-new', 'strict', 'insecure'];
