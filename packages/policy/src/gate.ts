/** The default size cap of the raw-text gate: 64 KiB of UTF-8. */
export const DEFAULT_MAX_INPUT_BYTES = 64 * 1024;

/** Why the raw-text gate refused an input. */
export interface GateFailure {
  /** `policy:control-character` or `policy:too-long`. */
  readonly rule: string;
  /** What was found and where. */
  readonly message: string;
}

/** Options of {@link gateInput}. */
export interface GateOptions {
  /** Size cap in UTF-8 bytes. Default {@link DEFAULT_MAX_INPUT_BYTES}. */
  readonly maxBytes?: number;
  /**
   * The text is typed into an interactive shell's line editor (`respond`), where TAB completes words:
   * TAB is refused too. Default false.
   */
  readonly typed?: boolean;
}

const NAMES: Record<number, string> = {
  0: 'NUL',
  3: 'Ctrl-C',
  4: 'Ctrl-D',
  8: 'backspace (Ctrl-H)',
  9: 'TAB',
  13: 'carriage return (CR)',
  21: 'Ctrl-U (erase line)',
  23: 'Ctrl-W (erase word)',
  26: 'Ctrl-Z',
  27: 'ESC',
  127: 'DEL',
};

function describe(code: number): string {
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const name =
    NAMES[code] ?? (code < 0x20 ? `Ctrl-${String.fromCharCode(code + 0x40)}` : 'a C1 control character');
  return `${name} (${hex})`;
}

/**
 * The raw-text gate that runs before any parsing: NUL, C0 control characters other than newline and tab
 * (and tab too when `typed`), DEL, C1 control characters, and text over the size cap are refused. A CR,
 * Ctrl-U or DEL typed into a terminal rewrites the line after any parser has looked at it.
 * Returns `undefined` when the text passes.
 */
export function gateInput(text: string, options: GateOptions = {}): GateFailure | undefined {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    return {
      rule: 'policy:too-long',
      message: `the input is ${bytes} bytes, over the policy's limit of ${maxBytes} bytes`,
    };
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const control =
      (c < 0x20 && c !== 0x0a && (c !== 0x09 || options.typed === true)) || (c >= 0x7f && c <= 0x9f);
    if (control) {
      return {
        rule: 'policy:control-character',
        message: `the input contains ${describe(c)} at offset ${i}; a terminal would rewrite the line after the policy checked it`,
      };
    }
  }
  return undefined;
}
