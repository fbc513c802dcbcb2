/**
 * How a host's process facts are read: `proc` from Linux's `/proc`, `ps` from the portable `ps` (macOS,
 * the BSDs, Linux). See docs/drivers.md.
 */
export type ProcessFactsKind = 'proc' | 'ps';
