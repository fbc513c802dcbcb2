/** Signal names as every driver and the engine spell them. */

/**
 * Normalises a signal name to `SIGXXX` (case and the `SIG` prefix are free: `term`, `TERM`, `SIGTERM`), or
 * undefined when it is not a plain signal name. Whether the host knows the signal is another question.
 */
export function normalizeSignal(signal: string): string | undefined {
  const upper = signal.trim().toUpperCase();
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  return /^SIG[A-Z0-9+-]+$/.test(name) ? name : undefined;
}
