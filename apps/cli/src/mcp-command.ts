/**
 * `conch mcp`: the MCP server from the CLI. Without `--daemon` it is the same server as `conch-mcp`
 * (its own engine, ended with the client). With `--daemon` it relays stdio to the daemon's socket, which
 * speaks the same newline-framed JSON-RPC: the tools act on the daemon's sessions, so a restarted MCP
 * client finds its sessions and commands again.
 */

import { serveStdio } from '@conch/mcp';
import type { CliSettings } from '@conch/service';
import { openDaemonSocket } from './daemon-client.js';

/** Serves MCP over stdio with a private engine (what `conch-mcp` does), with `conch-mcp`'s flags. */
export function serveMcp(settings: CliSettings): Promise<number> {
  return serveStdio(settings);
}

/** Relays stdin/stdout to the daemon until either side ends. */
export async function relayStdioToDaemon(): Promise<number> {
  const socket = await openDaemonSocket();
  return new Promise<number>((resolve) => {
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      process.stdin.unpipe(socket);
      socket.destroy();
      resolve(code);
    };
    process.stdin.pipe(socket);
    socket.pipe(process.stdout);
    process.stdin.on('end', () => socket.end());
    socket.on('close', () => finish(0));
    socket.on('error', (error) => {
      process.stderr.write(`conch mcp: the daemon connection failed: ${error.message}\n`);
      finish(1);
    });
    process.stdout.on('error', () => finish(0));
  });
}
