/**
 * The authentication plan of one SSH hop: the attempts in the order they are tried (an explicit key, the
 * ssh-agent, the config's or the default identity files, the password last, and only for the target).
 * Secrets are handed to ssh2 as copies that are zeroed when the handshake ends.
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConchError, ErrorCode } from '@conch/core';
import { expandHomePath } from '@conch/node';
import ssh2, { type AnyAuthMethod, type ParsedKey } from 'ssh2';
import { invalidArgument } from './errors.js';
import type { HopTarget } from './hop-target.js';

/** The options of `connectSsh` that say how to authenticate. */
export interface AuthOptions {
  password?: string;
  privateKeyPath?: string;
  passphrase?: string;
  useAgent?: boolean;
  agentSocket?: string;
  retainPasswordForExtraConnections?: boolean;
}

/** An authentication attempt in the order they are tried. */
export interface AuthAttempt {
  /** For messages: `publickey (/path)`, `publickey (ssh-agent)`, `password`. */
  label: string;
  /** The server-side method it needs. */
  method: 'publickey' | 'password';
  make: (username: string) => AnyAuthMethod;
  /** True when an extra connection may reuse this attempt after it succeeded. */
  reusable: boolean;
  /** Zeroes the secret bytes handed to ssh2 (run when a handshake ends). */
  wipe?: () => void;
}

/** Default identity files OpenSSH tries when none is configured. */
const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

/** Reads and parses a private key; errors are ConchErrors for an explicit path, undefined otherwise. */
function loadKey(
  path: string,
  passphrase: string | undefined,
  explicit: boolean,
): { key: ParsedKey } | { skipped: string } {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    if (explicit) {
      throw invalidArgument(
        `Invalid private_key_path: cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
        'Give the path of a readable private key file.',
      );
    }
    return { skipped: 'unreadable' };
  }
  // A Buffer copy of the passphrase, zeroed right after use.
  const secret = passphrase === undefined ? undefined : Buffer.from(passphrase, 'utf8');
  const parsed = ssh2.utils.parseKey(data, secret);
  secret?.fill(0);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key instanceof Error || key === undefined) {
    const message = key instanceof Error ? key.message : 'no key';
    const encrypted = /encrypted|passphrase|decrypt/i.test(message);
    if (explicit) {
      throw new ConchError(
        ErrorCode.SSH_AUTH_FAILED,
        encrypted
          ? passphrase === undefined
            ? `The private key ${path} is encrypted and no passphrase was given.`
            : `The passphrase does not decrypt the private key ${path}.`
          : `Cannot use the private key ${path}: ${message}.`,
        {
          hint: encrypted
            ? 'Give the right passphrase, or use the ssh-agent (use_agent).'
            : 'Give an OpenSSH, PEM or PuTTY private key.',
        },
      );
    }
    return { skipped: encrypted ? 'encrypted' : 'unparseable' };
  }
  if (!key.isPrivateKey()) {
    if (explicit)
      throw invalidArgument(`Invalid private_key_path: ${path} holds a public key, not a private one.`);
    return { skipped: 'not a private key' };
  }
  return { key };
}

/** The agent socket to use, or undefined. */
function agentPath(options: AuthOptions): string | undefined {
  if (options.useAgent === false) return undefined;
  const socket = options.agentSocket ?? process.env.SSH_AUTH_SOCK;
  return socket && existsSync(socket) ? socket : undefined;
}

/** Builds the ordered attempts for one hop. The password only ever goes to the target. */
export function authPlan(
  options: AuthOptions,
  hop: HopTarget,
  withPassword: boolean,
  skipped: string[],
): AuthAttempt[] {
  const attempts: AuthAttempt[] = [];
  const addKey = (path: string, key: ParsedKey) => {
    const attempt: AuthAttempt = {
      label: `publickey (${path})`,
      method: 'publickey',
      make: (username) => ({ type: 'publickey', username, key }),
      reusable: true,
    };
    attempts.push(attempt);
  };
  if (options.privateKeyPath !== undefined) {
    const path = expandHomePath(options.privateKeyPath);
    const loaded = loadKey(path, options.passphrase, !hop.jumpHost);
    if ('key' in loaded) addKey(path, loaded.key);
  }
  const agent = agentPath(options);
  if (agent) {
    attempts.push({
      label: 'publickey (ssh-agent)',
      method: 'publickey',
      make: (username) => ({ type: 'agent', username, agent }),
      reusable: true,
    });
  }
  const files =
    hop.identityFiles.length > 0
      ? hop.identityFiles
      : options.privateKeyPath === undefined
        ? DEFAULT_IDENTITIES.map((f) => join(homedir(), '.ssh', f)).filter((f) => existsSync(f))
        : [];
  for (const file of files) {
    if (options.privateKeyPath !== undefined && expandHomePath(options.privateKeyPath) === file) continue;
    const loaded = loadKey(
      file,
      options.privateKeyPath === undefined ? options.passphrase : undefined,
      false,
    );
    if ('key' in loaded) addKey(file, loaded.key);
    else if (loaded.skipped !== 'unreadable') skipped.push(`${file} (${loaded.skipped})`);
  }
  if (withPassword && options.password !== undefined) {
    const password = options.password;
    // ssh2 takes a Buffer too: hand it a copy that is zeroed once the handshake ends, so that no live
    // object (ssh2 keeps its last auth request) holds the password after connecting.
    const copies: Buffer[] = [];
    attempts.push({
      label: 'password',
      method: 'password',
      make: (username) => {
        const copy = Buffer.from(password, 'utf8');
        copies.push(copy);
        return { type: 'password', username, password: copy as unknown as string };
      },
      reusable: options.retainPasswordForExtraConnections === true,
      wipe: () => {
        for (const copy of copies.splice(0)) copy.fill(0);
      },
    });
  }
  return attempts;
}
