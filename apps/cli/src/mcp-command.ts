/**
 * `conch mcp`: the MCP server from the CLI. Without `--daemon` it is the same server as `conch-mcp`
 * (its own engine, ended with the client). With `--daemon` it relays the MCP client's stdio to the
 * daemon's socket, so the tools act on the daemon's sessions and a restarted MCP client finds its sessions
 * and commands again.
 *
 * The relay is an agent's door, and holds the same line as stdio: it reads the client through the one
 * transport guard (`ConchLineTransport`: line size, parse errors, batches, bad params), so a malformed line
 * is answered here and never reaches the daemon. It forwards MCP only: the daemon's own methods
 * (`conch/…`, e.g. `conch attach`'s keystrokes) are a person's and are refused, and the relay says so to the
 * daemon first thing (`notifications/conch/relay`). At the end of the client's input, calls already sent
 * are answered before it exits.
 *
 * When the daemon goes away (a crash, `conch daemon stop`), the calls in flight are answered with an error
 * saying so; the next message starts (or finds) a daemon again, replays the client's `initialize`, and goes
 * on: the first result in the default session then says `new_shell`.
 */

import { ConchLineTransport, errorReply } from '@conch/mcp/line-transport';
import type { CliSettings } from '@conch/service';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { openDaemonSocket } from './daemon-client.js';
import { DAEMON_METHODS, isDaemonOnlyMethod } from './daemon-methods.js';
import { daemonPaths } from './paths.js';

/** Serves MCP over stdio with a private engine (what `conch-mcp` does), with `conch-mcp`'s flags. */
export async function serveMcp(settings: CliSettings): Promise<number> {
  const { serveStdio } = await import('@conch/mcp');
  return serveStdio(settings);
}

/** How long calls sent before the client's end of input may take to answer. */
const END_OF_INPUT_GRACE_MS = 2500;
/** JSON-RPC: the method does not exist (for the client). */
const METHOD_NOT_FOUND = -32601;
/** JSON-RPC: a server error (the daemon went away during the call). */
const DAEMON_GONE = -32000;
/** How many times the relay tries to open a daemon connection before it answers a call with an error. */
const CONNECT_ATTEMPTS = 3;
/** The relay's own id for the `initialize` it replays to a new daemon. */
const REPLAY_ID = 'conch-relay-initialize';

/** Relays stdin/stdout to the daemon until the client's input ends; resolves with the exit code. */
export async function relayStdioToDaemon(): Promise<number> {
  const log = (message: string, fields: Record<string, unknown>) =>
    process.stderr.write(
      `conch mcp: ${message}${Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}\n`,
    );
  const client = new ConchLineTransport(process.stdin, process.stdout, { log });
  let daemon: ConchLineTransport | undefined;
  let connecting: Promise<ConchLineTransport> | undefined;
  /** The client's `initialize` and whether it said `initialized`: replayed to a new daemon. */
  let initialize: JSONRPCMessage | undefined;
  let initialized = false;
  let ending = false;

  const toClient = (message: JSONRPCMessage) =>
    client
      .send(message)
      .catch((error: unknown) => log('writing to the client failed', { error: String(error) }));

  /** Opens a daemon connection, announces the relay, and replays the client's handshake to a new daemon. */
  const handshake = async (replay: boolean): Promise<ConchLineTransport> => {
    const { socket } = await openDaemonSocket();
    // The relay reads the daemon through the same transport guard the daemon reads with.
    const transport = new ConchLineTransport(socket, socket, { role: 'client', endStreams: true });
    let replayed: () => void = () => {};
    const replayAnswered = new Promise<void>((resolve) => {
      replayed = resolve;
    });
    let lost: (error: Error) => void = () => {};
    const closed = new Promise<never>((_, reject) => {
      lost = reject;
    });
    closed.catch(() => {});
    transport.onmessage = (message) => {
      if ((message as { id?: unknown }).id === REPLAY_ID) {
        replayed();
        return;
      }
      void toClient(message);
    };
    transport.onclose = () => {
      lost(new Error('the daemon connection closed'));
      onDaemonGone(transport);
    };
    transport.onerror = (error) => log('daemon connection error', { error: error.message });
    await transport.start();
    // First thing: this connection is an agent's door (see daemon-methods.ts).
    await transport.send({ jsonrpc: '2.0', method: DAEMON_METHODS.relay } as JSONRPCMessage);
    if (replay && initialize) {
      await transport.send({ ...(initialize as object), id: REPLAY_ID } as JSONRPCMessage);
      await Promise.race([replayAnswered, closed]);
      if (initialized)
        await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage);
    }
    await Promise.race([Promise.resolve(), closed]);
    return transport;
  };

  /** {@link handshake}, tried again when the connection drops at once (a dying daemon still accepting). */
  const connectDaemon = async (replay: boolean): Promise<ConchLineTransport> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await handshake(replay);
      } catch (error) {
        if (attempt >= CONNECT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  };

  const ensureDaemonConnection = (): Promise<ConchLineTransport> => {
    if (daemon && !daemon.isOpen) daemon = undefined;
    if (daemon) return Promise.resolve(daemon);
    const replay = initialize !== undefined;
    connecting ??= connectDaemon(replay).then(
      (transport) => {
        daemon = transport;
        connecting = undefined;
        return transport;
      },
      (error: unknown) => {
        connecting = undefined;
        throw error;
      },
    );
    return connecting;
  };

  const onDaemonGone = (transport: ConchLineTransport): void => {
    if (daemon !== transport) return;
    daemon = undefined;
    if (ending) return;
    const why = `The conch daemon stopped while this call was running (see its log: ${daemonPaths().logFile}); its sessions and commands are gone. The next call starts a new daemon.`;
    for (const id of client.unansweredIds()) void toClient(errorReply(id, DAEMON_GONE, why));
  };

  const forward = async (message: JSONRPCMessage): Promise<void> => {
    const m = message as { id?: string | number; method?: unknown };
    if (typeof m.method === 'string' && isDaemonOnlyMethod(m.method)) {
      if (m.id !== undefined)
        void toClient(
          errorReply(
            m.id,
            METHOD_NOT_FOUND,
            `Method not found: ${m.method} is a method of the conch CLI's own connection to its daemon, not of MCP; it is refused here (conch mcp --daemon serves MCP only).`,
          ),
        );
      return;
    }
    if (m.method === 'initialize') initialize = message;
    if (m.method === 'notifications/initialized') initialized = true;
    try {
      await (await ensureDaemonConnection()).send(message);
    } catch (error) {
      if (m.id !== undefined && m.method !== undefined)
        void toClient(
          errorReply(m.id, DAEMON_GONE, `The conch daemon cannot be reached: ${(error as Error).message}`),
        );
    }
  };

  // A chain keeps the client's messages in order while a daemon connection is (re)opened.
  let queue = Promise.resolve();
  client.onmessage = (message) => {
    queue = queue.then(() => forward(message));
  };
  await ensureDaemonConnection();
  await client.start();

  return new Promise<number>((resolve) => {
    const finish = () => {
      if (ending) return;
      ending = true;
      void queue
        .then(() => client.whenAnswered(END_OF_INPUT_GRACE_MS))
        .then(async () => {
          await daemon?.close();
          await client.close();
          resolve(0);
        });
    };
    process.stdin.on('end', finish);
    process.stdin.on('close', finish);
    process.stdout.on('error', finish);
  });
}
