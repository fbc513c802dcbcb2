/**
 * `conch attach SID`: a live view of a session in the person's own terminal. The terminal goes to raw
 * mode; keystrokes are forwarded (the person can type and take over), the session's size follows the
 * window, and ctrl+] detaches. The session and the agent's commands in it keep working afterwards; conch's
 * completion markers and typed wrapper lines are removed by the daemon before anything is shown, and each
 * agent command shows dim as it starts: typed at the prompt as its own text, or a one-line header when it
 * runs isolated beside the person's terminal (held back while a full-screen program shows). Under a
 * command policy the view is read-only unless `--take-over` is given (see docs/cli.md).
 */

import { AltScreenWatch } from '@conch/core';
import { agentHeader, DIM, UNDIM } from './agent-header.js';
import {
  ATTACH_METHODS,
  AttachResultSchema,
  ClosedNotificationSchema,
  CommandNotificationSchema,
  OutputNotificationSchema,
} from './attach-protocol.js';
import { connectDaemon } from './daemon-client.js';

/** The detach key: ctrl+] (0x1d), as in telnet. */
export const DETACH_KEY = 0x1d;

/** Terminal modes a program in the session may have left on, switched off when the view ends. */
const RESET_MODES =
  '\u001b[0m\u001b[?25h\u001b[?1l\u001b>\u001b[?1000l\u001b[?1002l\u001b[?1003l\u001b[?1006l\u001b[?2004l';

/** Options of {@link attachSession}. */
export interface AttachOptions {
  /** Type into the session even when a command policy makes the view read-only by default. */
  takeOver?: boolean;
}

/** The message of an error from the daemon. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Attaches to `sessionId` until the person detaches or the shell ends; resolves with the exit code. */
export async function attachSession(sessionId: string, options: AttachOptions = {}): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  const stderr = process.stderr;
  if (!stdin.isTTY || !stdout.isTTY) {
    stderr.write('conch: attach needs a terminal (stdin and stdout must be a TTY).\n');
    return 1;
  }
  const connection = await connectDaemon();
  const { client } = connection;
  let attachId: string | undefined;
  let finish: (code: number) => void = () => {};
  let why = `detached from ${sessionId}`;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  // Output may arrive before the attach result names its id: keep it until then.
  const early: Buffer[] = [];
  const alt = new AltScreenWatch();
  let atLineStart = true;
  /** Headers held back while a full-screen program shows. */
  const headers: string[] = [];
  /** The echo of an agent command typed at the prompt, shown dim when it arrives. */
  let echo: string | undefined;
  const show = (bytes: Buffer) => {
    if (bytes.length > 0) {
      alt.push(bytes);
      if (echo !== undefined && bytes.toString('utf8') === echo)
        stdout.write(`${DIM}${echo.slice(0, -2)}${UNDIM}\r\n`);
      else stdout.write(bytes);
      echo = undefined;
      atLineStart = bytes[bytes.length - 1] === 0x0a;
    }
    if (!alt.on && headers.length > 0) {
      stdout.write(`${atLineStart ? '' : '\r\n'}${headers.splice(0).join('\r\n')}\r\n`);
      atLineStart = true;
    }
  };
  client.onNotification(ATTACH_METHODS.output, (raw) => {
    const { params } = OutputNotificationSchema.parse({ method: ATTACH_METHODS.output, params: raw });
    const bytes = Buffer.from(params.data, 'base64');
    if (attachId === undefined) early.push(bytes);
    else if (params.attach_id === attachId) show(bytes);
  });
  client.onNotification(ATTACH_METHODS.command, (raw) => {
    const { params } = CommandNotificationSchema.parse({ method: ATTACH_METHODS.command, params: raw });
    if (params.attach_id !== attachId) return;
    if (!params.isolated) {
      echo = `${params.text.replace(/\r?\n/g, '\r\n')}\r\n`;
      return;
    }
    headers.push(agentHeader(params, stdout.columns ?? 80));
    show(Buffer.alloc(0));
  });
  client.onNotification(ATTACH_METHODS.closed, (raw) => {
    const { params } = ClosedNotificationSchema.parse({ method: ATTACH_METHODS.closed, params: raw });
    if (params.attach_id !== attachId) return;
    why = `the shell of ${sessionId} ended`;
    finish(0);
  });
  client.onclose = () => {
    why = 'the daemon connection closed';
    finish(1);
  };

  const requestAttach = async () =>
    AttachResultSchema.parse(
      await client.request(ATTACH_METHODS.attach, {
        session_id: sessionId,
        cols: stdout.columns,
        rows: stdout.rows,
        take_over: options.takeOver === true,
        client_pid: process.pid,
      }),
    );
  let attached: Awaited<ReturnType<typeof requestAttach>>;
  try {
    attached = await requestAttach();
  } catch (error) {
    stderr.write(`conch: ${messageOf(error)}\n`);
    await connection.close();
    return 1;
  }
  attachId = attached.attach_id;
  const input = attached.input;

  // Start with what the terminal shows now (without its trailing blank rows), then live output.
  const rows = [...attached.screen];
  while (rows.length > 0 && rows.at(-1)?.trim() === '') rows.pop();
  stdout.write(`\u001b[H\u001b[2J${rows.join('\r\n')}`);
  if (attached.cursor) stdout.write(`\u001b[${attached.cursor.row + 1};${attached.cursor.col + 1}H`);
  alt.on = attached.alt_screen === true;
  atLineStart = attached.cursor === undefined || attached.cursor.col === 0;
  for (const bytes of early.splice(0)) show(bytes);
  stderr.write(
    input
      ? `\r\n[attached to ${sessionId}; detach with ctrl+]]\r\n`
      : `\r\n[watching ${sessionId}, read-only: ${attached.read_only_reason ?? 'input is off'} (conch attach --take-over); detach with ctrl+]]\r\n`,
  );

  const send = (method: string, params: Record<string, unknown>) =>
    client.request(method, { attach_id: attachId, ...params });
  let warned = false;
  const onResize = () => {
    void send(ATTACH_METHODS.resize, { cols: stdout.columns, rows: stdout.rows }).catch(() => {});
  };
  const onData = (chunk: Buffer) => {
    const detachAt = chunk.indexOf(DETACH_KEY);
    const forward = detachAt >= 0 ? chunk.subarray(0, detachAt) : chunk;
    if (forward.length > 0) {
      if (input) {
        void send(ATTACH_METHODS.input, { data: forward.toString('base64') }).catch((error: unknown) => {
          stderr.write(`\r\n[conch: ${messageOf(error)}]\r\n`);
        });
      } else if (!warned) {
        warned = true;
        stderr.write('\r\n[read-only: keystrokes are not sent; detach with ctrl+]]\r\n');
      }
    }
    if (detachAt >= 0) finish(0);
  };
  stdin.setRawMode(true);
  stdin.on('data', onData);
  stdin.resume();
  stdout.on('resize', onResize);

  const code = await finished;
  stdin.off('data', onData);
  stdout.off('resize', onResize);
  stdin.setRawMode(false);
  stdin.pause();
  await send(ATTACH_METHODS.detach, {}).catch(() => {});
  stdout.write(RESET_MODES);
  stderr.write(`\r\n[${why}]\r\n`);
  await connection.close();
  return code;
}
