/**
 * One terminal's byte stream on its way into the core: secrets masked first, then the screen fed, then
 * shell-integration markers split out from output.
 */

import type { ScreenRenderer } from '../driver.js';
import { MarkerParser, type StreamPiece } from '../shell/marker-parser.js';
import { SecretRedactor } from './secret-redactor.js';

/** Masks secrets, feeds the screen and parses markers for one terminal. */
export class TerminalStream {
  readonly redactor = new SecretRedactor();
  private readonly parser: MarkerParser;
  private readonly screen: ScreenRenderer | undefined;

  constructor(nonce: string, screen: ScreenRenderer | undefined) {
    this.parser = new MarkerParser(nonce);
    this.screen = screen;
  }

  /** Processes a chunk from the terminal and returns its pieces in order. */
  push(chunk: Uint8Array): StreamPiece[] {
    const safe = this.redactor.push(chunk);
    if (safe.length === 0) return [];
    this.screen?.write(safe);
    return this.parser.push(safe);
  }

  /** Returns everything still held back (the terminal ended). */
  flush(): StreamPiece[] {
    const rest = this.redactor.clear();
    if (rest.length > 0) this.screen?.write(rest);
    const pieces = rest.length > 0 ? this.parser.push(rest) : [];
    return [...pieces, ...this.parser.flush()];
  }
}
