/**
 * `conch web [--http HOST:PORT] [--token-file FILE] [--no-open] [--stop]`: asks the daemon (starting it on
 * first use) to serve the web page of every session, prints its address with the token in the fragment
 * (`http://127.0.0.1:PORT/#token=…`: a fragment is never sent to a server, so the token reaches no log or
 * Referer), and opens it in the person's browser when there is one. The browser is handed a private file
 * (mode 0600, in the daemon's private directory) that forwards to the address, never the address itself:
 * a program's arguments are readable by every local user.
 */

import { spawn } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { connectDaemon } from './daemon-client.js';
import { daemonPaths } from './paths.js';
import { escapeControls } from './terminal-output.js';
import { WebServeResultSchema } from './web/door.js';
import { WEB_METHODS } from './web/protocol.js';

/** Options of {@link serveWebPage}. */
export interface WebOptions {
  /** `HOST:PORT` to serve on (default: 127.0.0.1, a free port, or where the page is served already). */
  listen?: string;
  /** The token to require (from `--token-file`). */
  token?: string;
  /** Open the page in a browser (default true: when one is available). */
  open?: boolean;
  /** Stop serving the page. */
  stop?: boolean;
}

/** The program that opens a URL or file in the person's browser here, if there is one. */
function browserOpener(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const find = (name: string) =>
    (env.PATH ?? '')
      .split(delimiter)
      .map((dir) => join(dir, name))
      .find((path) => {
        try {
          accessSync(path, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      });
  if (process.platform === 'darwin') return find('open');
  // Without a display there is no browser to show the page (an ssh session, a container, a test).
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return find('xdg-open');
}

/** Opens `address` through a private forwarding file; false when no browser is available. */
function openInBrowser(address: string): boolean {
  const opener = browserOpener();
  if (opener === undefined) return false;
  const file = join(daemonPaths().dir, 'web-open.html');
  const json = JSON.stringify(address).replace(/</g, '\\u003c');
  writeFileSync(
    file,
    `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>conch</title><script>location.replace(${json})</script><a href="${address.replace(/[&"<>]/g, '')}">open the conch page</a>\n`,
    { mode: 0o600 },
  );
  const child = spawn(opener, [file], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
  return true;
}

/** `conch web`: resolves with the exit code. */
export async function serveWebPage(options: WebOptions): Promise<number> {
  const connection = await connectDaemon();
  try {
    const result = WebServeResultSchema.parse(
      await connection.client.request(WEB_METHODS.serve, {
        ...(options.listen === undefined ? {} : { listen: options.listen }),
        ...(options.token === undefined ? {} : { token: options.token }),
        ...(options.stop ? { stop: true } : {}),
        client_pid: process.pid,
      }),
    );
    if (options.stop) {
      process.stdout.write(result.stopped ? `stopped serving ${result.url}\n` : 'the page was not served\n');
      return 0;
    }
    const address = `${result.url}#token=${result.token}`;
    process.stdout.write(`${address}\n`);
    const opened = options.open !== false && openInBrowser(address);
    process.stderr.write(
      `conch web: ${result.started ? 'serving' : 'already serving'} the page of every session at ${result.url} (the token in the link is its key: give it only to people who may supervise)${opened ? '; opening it in your browser' : ''}\n`,
    );
    return 0;
  } catch (error) {
    // The daemon's refusal (a policy, a bad token or address), without the JSON-RPC prefix.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`conch: ${escapeControls(message.replace(/^MCP error -?\d+: /, ''))}\n`);
    return 1;
  } finally {
    await connection.close();
  }
}
