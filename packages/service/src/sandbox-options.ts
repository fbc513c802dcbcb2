/**
 * The sandbox as the faces spell it (docs/sandbox.md): the `--sandbox`, `--sandbox-write DIR`,
 * `--sandbox-network none|all|HOST,…` and `--sandbox-required` flags (shared by `conch-mcp`, `conch mcp`
 * and `conch exec`), their translation into the core's `SandboxRequest`, and the facts of this host that
 * the rules' defaults depend on. The rules themselves are the core's (`resolveSandboxRules`).
 */

import { homedir } from 'node:os';
import {
  ConchError,
  checkSandboxNetwork,
  type SandboxHostFacts,
  type SandboxNetwork,
  type SandboxRequest,
} from '@conch/core';
import { expandHomePath } from '@conch/node';
import { type Command, InvalidArgumentError } from 'commander';

/** The sandbox flags as parsed (see {@link addSandboxOptions}). */
export interface SandboxFlags {
  sandbox?: boolean;
  sandboxWrite?: string[];
  sandboxNetwork?: SandboxNetwork;
  sandboxRequired?: boolean;
}

/** Parses `--sandbox-network`: `none`, `all`, or comma-separated host names. */
export function parseSandboxNetwork(value: string): SandboxNetwork {
  const trimmed = value.trim();
  const network =
    trimmed === 'none' || trimmed === 'all'
      ? trimmed
      : trimmed
          .split(',')
          .map((h) => h.trim())
          .filter((h) => h !== '');
  try {
    return checkSandboxNetwork(network);
  } catch (error) {
    throw new InvalidArgumentError(
      `expected none, all or comma-separated host names, got ${JSON.stringify(value)}${ConchError.is(error) ? ` (${error.message})` : ''}.`,
    );
  }
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds the sandbox flags to a command; `required` adds `--sandbox-required` (the servers' flag). */
export function addSandboxOptions(command: Command, options: { required: boolean }): Command {
  command
    .option(
      '--sandbox',
      'run local sessions in an OS sandbox (bubblewrap): writes only in the cwd and a private /tmp, the secret stores (~/.ssh, ~/.aws, …) unreadable, no network',
    )
    .option(
      '--sandbox-write <dir>',
      'also let sandboxed sessions write here (repeatable; implies --sandbox)',
      collect,
    )
    .option(
      '--sandbox-network <net>',
      'network of sandboxed sessions: none (default), all, or HOST,… (only those hosts, through a proxy; implies --sandbox)',
      parseSandboxNetwork,
    );
  if (options.required) {
    command.option(
      '--sandbox-required',
      'every local session must be sandboxed: create_local may narrow the sandbox, never widen or drop it (implies --sandbox)',
    );
  }
  return command;
}

/** The sandbox flags among commander's parsed options. */
export function sandboxFlagsFromOptions(o: Record<string, unknown>): SandboxFlags {
  const flags: SandboxFlags = {};
  if (o.sandbox === true) flags.sandbox = true;
  if (Array.isArray(o.sandboxWrite)) flags.sandboxWrite = o.sandboxWrite as string[];
  if (o.sandboxNetwork !== undefined) flags.sandboxNetwork = o.sandboxNetwork as SandboxNetwork;
  if (o.sandboxRequired === true) flags.sandboxRequired = true;
  return flags;
}

/**
 * What the flags ask for, or undefined when they ask for nothing. `--sandbox-write DIR` lists the writable
 * paths: the cwd (`base`) stays writable beside them.
 */
export function sandboxRequestFromFlags(flags: SandboxFlags, base: string): SandboxRequest | undefined {
  const any =
    flags.sandbox === true ||
    flags.sandboxRequired === true ||
    flags.sandboxWrite !== undefined ||
    flags.sandboxNetwork !== undefined;
  if (!any) return undefined;
  if (flags.sandboxWrite === undefined && flags.sandboxNetwork === undefined) return true;
  return {
    ...(flags.sandboxWrite === undefined
      ? {}
      : { write: [base, ...flags.sandboxWrite.map((p) => expandHomePath(p))] }),
    ...(flags.sandboxNetwork === undefined ? {} : { network: flags.sandboxNetwork }),
  };
}

/**
 * The facts of this host the rules' defaults depend on, for a session whose cwd is `cwd`: the home
 * directory, and what no sandbox may read besides the secret stores: conch's own state (`conchState`:
 * spill files, the daemon's home), the user's runtime directory ($XDG_RUNTIME_DIR: the session bus, the
 * daemon's socket, agents) and the ssh-agent's socket.
 */
export function sandboxHostFacts(cwd: string, conchState: readonly string[] = []): SandboxHostFacts {
  const denied = [...conchState];
  // The daemon's home when it is not the default (~/.conch, a secret store already).
  const home = process.env.CONCH_HOME;
  if (home?.startsWith('/')) denied.push(home);
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime?.startsWith('/')) denied.push(runtime);
  const agent = process.env.SSH_AUTH_SOCK;
  if (agent?.startsWith('/')) denied.push(agent);
  return { home: homedir(), cwd, alwaysDenied: denied };
}
