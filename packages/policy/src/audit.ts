import { closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditSink, AuditEntry as CoreAuditEntry } from '@conch/core';

/**
 * One audit record, as the core's `AuditSink` receives it, plus `secret`. Secret input (`respond` with
 * `secret: true`, passwords) must never be passed here; `secret: true` makes the log write
 * `"input": "[secret]"` anyway, as a second line of defence.
 */
export type AuditRecord = CoreAuditEntry & {
  /** The input was secret: its text is replaced by `[secret]`. */
  readonly secret?: boolean;
  /** When it happened (default: now). */
  readonly time?: Date;
};

/** An append-only JSON-lines audit log: one line per command, `{ time, kind, by?, session_id?, command_id?, input, decision, reason }`. */
export interface AuditLog extends AuditSink {
  /** The file written to. */
  readonly path: string;
  /** Appends one line (synchronously, so records keep their order and survive a crash). */
  record(entry: AuditRecord): void;
  /** Closes the file; later records are dropped. */
  close(): void;
}

/**
 * Opens (creating if needed, mode 0600, in a directory created with mode 0700) an append-only audit log.
 * Each {@link AuditLog.record} writes one JSON line. Throws if the file cannot be opened; a failed write
 * throws from `record`.
 */
export function createAuditLog(path: string): AuditLog {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number | undefined = openSync(path, 'a', 0o600);
  try {
    fchmodSync(fd, 0o600);
  } catch {
    // Not our file (e.g. /dev/stdout): keep its mode.
  }
  return {
    path,
    record(entry: AuditRecord): void {
      if (fd === undefined) return;
      const line = {
        time: (entry.time ?? new Date()).toISOString(),
        kind: entry.kind,
        ...(entry.by === undefined ? {} : { by: entry.by }),
        ...(entry.session_id === undefined ? {} : { session_id: entry.session_id }),
        ...(entry.command_id === undefined ? {} : { command_id: entry.command_id }),
        input: entry.secret === true ? '[secret]' : entry.input,
        decision: entry.decision,
        reason: entry.reason,
      };
      writeSync(fd, `${JSON.stringify(line)}\n`);
    },
    close(): void {
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
    },
  };
}
