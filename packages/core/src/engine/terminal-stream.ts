/**
 * One terminal's byte stream on its way into the core: secrets masked first, then shell-integration
 * markers split out from output, then the screen fed with the output. A command's start marker clears
 * the screen, so the shell's prompt and the typed (wrapped) command line are never on a command's screen.
 */

import type { ScreenRenderer } from '../driver.js';
import { MarkerParser, type StreamPiece } from '../shell/marker-parser.js';
import { SecretRedactor } from './secret-redactor.js';

/** Home the cursor, erase the display and its scrollback: a clean screen for the command that starts. */
const CLEAR_SCREEN = new TextEncoder().encode('\x1b[H\x1b[2J\x1b[3J');

/** Masks secrets, parses markers and feeds the screen for one terminal. */
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
    return this.toScreen(this.parser.push(safe));
  }

  private toScreen(pieces: StreamPiece[]): StreamPiece[] {
    if (!this.screen) return pieces;
    for (const piece of pieces) {
      if (piece.type === 'data') this.screen.write(piece.bytes);
      else if (piece.marker.type === 'start') this.screen.write(CLEAR_SCREEN);
    }
    return pieces;
  }

  /** Returns everything still held back (the terminal ended). */
  flush(): StreamPiece[] {
    const rest = this.redactor.clear();
    const pieces = rest.length > 0 ? this.parser.push(rest) : [];
    return this.toScreen([...pieces, ...this.parser.flush()]);
  }
}
