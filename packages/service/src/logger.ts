/**
 * A tiny leveled logger that writes only to stderr: stdout belongs to the MCP protocol.
 *
 * Callers log tool names and ids, never tool arguments: `respond` text may be a password, and a
 * command line may carry a token.
 */

/** Log levels, most severe first. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A leveled logger. */
export interface Logger {
  readonly level: LogLevel;
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
}

/** Where log lines go (default: `process.stderr`). */
export interface LogSink {
  write(line: string): unknown;
}

/** Formats one field value compactly: strings bare unless they contain spaces, others as JSON. */
function formatValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (value instanceof Error) return JSON.stringify(value.stack ?? value.message);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Creates a logger that writes `ISO-time LEVEL message key=value…` lines to `sink` (stderr by default)
 * for messages at `level` or more severe.
 */
export function createLogger(level: LogLevel = 'info', sink: LogSink = process.stderr): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const log =
    (at: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (LOG_LEVELS.indexOf(at) > threshold) return;
      let line = `${new Date().toISOString()} conch-mcp ${at.toUpperCase()} ${message}`;
      if (fields) {
        for (const [key, value] of Object.entries(fields)) {
          if (value !== undefined) line += ` ${key}=${formatValue(value)}`;
        }
      }
      try {
        sink.write(`${line}\n`);
      } catch {
        // A closed stderr must not take the server down.
      }
    };
  return { level, error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}

/** A logger that drops everything (for embedding the server in tests or other programs). */
export const silentLogger: Logger = {
  level: 'error',
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
};
