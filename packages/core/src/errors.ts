/**
 * The error codes of docs/tools.md. Every error conch reports carries exactly one of these.
 */
export const ErrorCode = {
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  SESSION_CLOSED: 'SESSION_CLOSED',
  SESSION_LOST: 'SESSION_LOST',
  COMMAND_NOT_FOUND: 'COMMAND_NOT_FOUND',
  COMMAND_FINISHED: 'COMMAND_FINISHED',
  POLICY_DENIED: 'POLICY_DENIED',
  LIMIT_REACHED: 'LIMIT_REACHED',
  SSH_AUTH_FAILED: 'SSH_AUTH_FAILED',
  SSH_HOST_KEY_REJECTED: 'SSH_HOST_KEY_REJECTED',
  SSH_UNREACHABLE: 'SSH_UNREACHABLE',
  WRITE_TIMEOUT: 'WRITE_TIMEOUT',
  DELEGATE_BUSY: 'DELEGATE_BUSY',
  DELEGATE_UNAVAILABLE: 'DELEGATE_UNAVAILABLE',
  SANDBOX_UNAVAILABLE: 'SANDBOX_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;

/** One of the string codes of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** All error codes, in the documented order. */
export const ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCode);

import { type Hint, NEUTRAL_VOCABULARY, type Vocabulary, wordHint } from './hint.js';

const BRAND = Symbol.for('conch.ConchError');

/** Options for {@link ConchError}. */
export interface ConchErrorOptions {
  /**
   * What the caller can do about it: plain text, or a face-neutral {@link Hint} when it points at
   * another operation (each face words the verbs, see `hint.ts`).
   */
  hint?: string | Hint;
  /** Machine-readable details (never secrets). */
  data?: Record<string, unknown>;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The one error type of conch. `code` is one of {@link ErrorCode}; `message` names the bad value and the
 * valid choices. Branded with `Symbol.for` so {@link ConchError.is} works across duplicated package copies.
 */
export class ConchError extends Error {
  readonly code: ErrorCode;
  /** The hint in face-neutral form (undefined when there is none). */
  readonly hintParts: Hint | undefined;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: ConchErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConchError';
    this.code = code;
    this.hintParts = typeof options.hint === 'string' ? [options.hint] : options.hint;
    this.data = options.data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for any ConchError, even one created by another copy of this package. */
  static is(value: unknown): value is ConchError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** The hint worded with the neutral vocabulary (faces use {@link ConchError.hintIn}). */
  get hint(): string | undefined {
    return this.hintIn(NEUTRAL_VOCABULARY);
  }

  /** The hint worded with a face's vocabulary. */
  hintIn(vocabulary: Vocabulary): string | undefined {
    return this.hintParts === undefined ? undefined : wordHint(this.hintParts, vocabulary);
  }

  /**
   * The wire shape of docs/tools.md: `{ code, message, hint?, data? }`, the hint worded with
   * `vocabulary` (default: the neutral one).
   */
  toJSON(vocabulary: Vocabulary = NEUTRAL_VOCABULARY): {
    code: ErrorCode;
    message: string;
    hint?: string;
    data?: Record<string, unknown>;
  } {
    const hint = this.hintIn(vocabulary);
    return {
      code: this.code,
      message: this.message,
      ...(hint === undefined ? {} : { hint }),
      ...(this.data === undefined ? {} : { data: this.data }),
    };
  }
}

/** Wraps anything thrown into a ConchError (unknown errors become `INTERNAL`). */
export function toConchError(value: unknown): ConchError {
  if (ConchError.is(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new ConchError(ErrorCode.INTERNAL, `Internal error: ${message}`, { cause: value });
}
