/**
 * The interfaces through which the engine consults a command policy and an audit log. The policy
 * itself (`@conch/policy`) implements them; the core only asks.
 */

/** One simple command found in the input, with its verdict (docs/policy.md). */
export interface PolicyCommandVerdict {
  text: string;
  argv: string[];
  decision: 'allow' | 'deny';
  rule?: string;
}

/** The decision for a whole input (docs/policy.md `PolicyDecision`). */
export interface PolicyDecision {
  decision: 'allow' | 'deny';
  reason: string;
  commands: PolicyCommandVerdict[];
}

/** A command policy as the engine sees it. */
export interface CommandPolicy {
  /** True when any rule is configured (policy-mode sessions start their shells without rc files). */
  readonly active: boolean;
  /**
   * Decides on `command`. `typed`: the text is typed raw into an interactive shell (respond), so history
   * expansion and completion keys matter; otherwise it runs the way `execute` runs it (no history
   * expansion: conch types `!` as `\x21`).
   */
  evaluate(command: string, options?: { typed?: boolean; historyExpansion?: boolean }): PolicyDecision;
}

/** One audit record. `input` is never a secret: secret input is not passed here at all. */
export interface AuditEntry {
  kind: 'execute' | 'respond' | 'send_control' | 'check' | 'attach';
  /** `person`: a person typed it through `conch attach` (absent on what the agent did). */
  by?: 'person';
  session_id?: string;
  command_id?: string;
  input: string;
  decision: 'allow' | 'deny';
  reason: string;
}

/** Where audit records go (e.g. a JSON-lines file). */
export interface AuditSink {
  record(entry: AuditEntry): void;
}
