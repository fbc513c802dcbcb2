/**
 * `Delegator`: hands coding tasks to OpenCode through one warm server (see {@link OpencodeServer}) and
 * returns a short, honest {@link DelegateResult}.
 *
 * A task: the agent and model are checked against the server before anything runs; the session is created
 * (with rules that deny whatever would ask) or continued; the prompt is sent asynchronously and the
 * server's event stream is followed until the session is idle — tool calls become progress reports, any
 * permission or question request is rejected and reported, cancellation and `timeout_s` abort the session.
 * The result is read back from the session's messages (not from HTTP statuses).
 */

import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { type CallContext, ConchError, ErrorCode } from '@conch/core';
import type { OpencodeClient, Event as OpencodeEvent, PermissionRuleset } from '@opencode-ai/sdk/v2';
import {
  DEFAULT_OUTPUT_CAP,
  type DelegateResult,
  type DelegateStep,
  type DelegateTaskArgs,
  type DelegateTaskInput,
  delegateTaskInput,
} from './params.js';
import { summarizeTurn } from './result.js';
import { OpencodeServer, type OpencodeServerOptions } from './server.js';

/** Options of a {@link Delegator}. */
export interface DelegatorOptions extends OpencodeServerOptions {
  /** Cap of `output` in characters (default 8000). */
  outputCap?: number;
  /**
   * How many times OpenCode may retry a failing model call (HTTP 5xx, rate limits) before the task is
   * aborted with status `error` and the provider's message (default 2).
   */
  maxRetries?: number;
  /** The model (`provider/model`) of tasks that do not name one (default: OpenCode's configured model). */
  defaultModel?: string;
}

/** How often a running task reports progress even when OpenCode sends no events (ms). */
export const PROGRESS_INTERVAL_MS = 2000;

/** The default of {@link DelegatorOptions.maxRetries}. */
export const DEFAULT_MAX_RETRIES = 2;

/**
 * Rules every delegated session is created with: whatever would ask (leaving the project directory, a
 * repeated tool loop, a question to the user) is denied, so no prompt can block on an answer.
 */
export const NEVER_ASK_RULES: PermissionRuleset = [
  { permission: 'external_directory', pattern: '*', action: 'deny' },
  { permission: 'doom_loop', pattern: '*', action: 'deny' },
  { permission: 'question', pattern: '*', action: 'deny' },
];

function fail(code: ErrorCode, message: string, hint?: string): never {
  throw new ConchError(code, message, hint === undefined ? {} : { hint });
}

function apiErrorText(error: unknown): string {
  if (error === undefined || error === null) return 'no answer';
  if (typeof error === 'object') {
    const data = (error as { data?: { message?: string } }).data;
    if (data?.message) return data.message;
    const name = (error as { name?: string }).name;
    if (name) return name;
  }
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** Delegates tasks to OpenCode; one warm server, started on first use, stopped by {@link close}. */
export class Delegator {
  private readonly options: DelegatorOptions;
  private server: Promise<OpencodeServer> | undefined;
  private readonly busy = new Set<string>();
  private closed = false;

  constructor(options: DelegatorOptions = {}) {
    this.options = options;
  }

  /** The running server (started, or attached, on first use). Throws `DELEGATE_UNAVAILABLE`. */
  ensureServer(): Promise<OpencodeServer> {
    if (this.closed) fail(ErrorCode.DELEGATE_UNAVAILABLE, 'Delegation is shut down.');
    if (this.server === undefined) {
      const starting = OpencodeServer.start(this.options);
      this.server = starting;
      // A failed start is not cached: the next task tries again.
      starting.catch(() => {
        if (this.server === starting) this.server = undefined;
      });
    }
    return this.server;
  }

  /** Stops the server if this delegator spawned it. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const server = this.server;
    this.server = undefined;
    if (server) await server.then((s) => s.stop()).catch(() => undefined);
  }

  /** Runs one task to its end (or timeout/cancellation). Argument and availability errors are thrown. */
  async delegate(input: DelegateTaskInput, call: CallContext = {}): Promise<DelegateResult> {
    const parsed = delegateTaskInput.safeParse(input);
    if (!parsed.success) {
      fail(ErrorCode.INVALID_ARGUMENT, `Invalid arguments for delegate_task: ${parsed.error.message}`);
    }
    const args = parsed.data;
    checkDir(args.dir);
    const server = await this.ensureServer();
    const client = server.client;
    await checkAgent(client, args);
    const wanted = args.model ?? this.options.defaultModel;
    const model = wanted === undefined ? undefined : await checkModel(client, args.dir, wanted);

    let sessionID: string;
    if (args.session_id !== undefined) {
      sessionID = args.session_id;
      if (this.busy.has(sessionID)) {
        fail(
          ErrorCode.DELEGATE_BUSY,
          `OpenCode session ${sessionID} is already running a task; one task at a time per session.`,
          'Wait for the running task to finish, or omit session_id to start a new session.',
        );
      }
      this.busy.add(sessionID);
      const found = await client.session
        .get({ sessionID, directory: args.dir })
        .catch((e: unknown) => ({ error: e }));
      if (!('data' in found) || found.data === undefined) {
        this.busy.delete(sessionID);
        fail(
          ErrorCode.SESSION_NOT_FOUND,
          `OpenCode session ${JSON.stringify(sessionID)} was not found.`,
          'Pass a session_id from an earlier delegate_task result, or omit it to start a new session.',
        );
      }
    } else {
      const created = await client.session.create({
        directory: args.dir,
        title: args.task.slice(0, 80),
        permission: NEVER_ASK_RULES,
      });
      if (created.data === undefined) {
        fail(
          ErrorCode.DELEGATE_UNAVAILABLE,
          `OpenCode could not create a session: ${apiErrorText(created.error)}.`,
        );
      }
      sessionID = created.data.id;
      this.busy.add(sessionID);
    }
    try {
      return await this.run(client, args, sessionID, model, call);
    } finally {
      this.busy.delete(sessionID);
    }
  }

  private async run(
    client: OpencodeClient,
    args: DelegateTaskArgs,
    sessionID: string,
    model: { providerID: string; modelID: string } | undefined,
    call: CallContext,
  ): Promise<DelegateResult> {
    const started = Date.now();
    const directory = args.dir;
    const ours = new Set([sessionID]);
    const rejected: DelegateStep[] = [];
    const reported = new Set<string>();
    let lastActivity = '';
    const report = (message: string): void => {
      lastActivity = message;
      call.onProgress?.({ elapsed_ms: Date.now() - started, message });
    };
    // A heartbeat at least every 2 s: clients with short request timeouts (reset by progress) keep waiting
    // while the model thinks without producing events.
    const heartbeat = call.onProgress
      ? setInterval(() => {
          const seconds = Math.round((Date.now() - started) / 1000);
          call.onProgress?.({
            elapsed_ms: Date.now() - started,
            message: `working (${seconds} s)${lastActivity ? `; last: ${lastActivity}` : ''}`,
          });
        }, PROGRESS_INTERVAL_MS)
      : undefined;

    const events = new AbortController();
    let stopReason: 'timeout' | 'cancelled' | 'error' | undefined;
    let failure: string | undefined;
    const maxRetries = this.options.maxRetries ?? DEFAULT_MAX_RETRIES;
    let markIdle: () => void = () => {};
    const idle = new Promise<void>((resolve) => {
      markIdle = resolve;
    });
    let markConnected: () => void = () => {};
    const connected = new Promise<void>((resolve) => {
      markConnected = resolve;
    });
    let streamError: string | undefined;
    // The event stream reconnects by itself; events sent while it was down are lost, so after a reconnect
    // the session's status is asked once (an idle session means the task ended meanwhile).
    let connections = 0;
    let sent = false;
    const checkIdleAfterReconnect = async (): Promise<void> => {
      if (!sent) return;
      const statuses = await client.session.status({ directory }).catch(() => undefined);
      const mine = (statuses?.data as Record<string, { type: string }> | undefined)?.[sessionID];
      if (statuses?.data !== undefined && (mine === undefined || mine.type === 'idle')) markIdle();
    };

    const onEvent = (event: OpencodeEvent): void => {
      switch (event.type) {
        case 'server.connected':
          if (connections++ > 0) void checkIdleAfterReconnect();
          markConnected();
          return;
        case 'session.created': {
          const info = event.properties.info;
          if (info.parentID !== undefined && ours.has(info.parentID)) ours.add(info.id);
          return;
        }
        case 'message.part.updated': {
          const part = event.properties.part;
          if (!ours.has(part.sessionID)) return;
          if (part.type === 'step-start') report('thinking');
          if (part.type !== 'tool' || part.state.status === 'pending') return;
          const key = `${part.callID}:${part.state.status}`;
          if (reported.has(key)) return;
          reported.add(key);
          const title = 'title' in part.state && part.state.title ? `: ${part.state.title}` : '';
          report(`${part.tool} ${part.state.status}${title}`);
          return;
        }
        case 'permission.asked': {
          const ask = event.properties;
          if (!ours.has(ask.sessionID)) return;
          rejected.push({
            type: 'permission',
            tool: ask.permission,
            title: ask.patterns.join(', ').slice(0, 200),
            status: 'rejected',
          });
          report(`permission ${ask.permission} rejected`);
          void client.permission
            .reply({
              requestID: ask.id,
              directory,
              reply: 'reject',
              message: 'Delegated tasks cannot ask for permission.',
            })
            .catch(() => undefined);
          return;
        }
        case 'question.asked': {
          const ask = event.properties;
          if (!ours.has(ask.sessionID)) return;
          rejected.push({ type: 'permission', tool: 'question', status: 'rejected' });
          void client.question.reject({ requestID: ask.id, directory }).catch(() => undefined);
          return;
        }
        case 'session.idle':
          if (event.properties.sessionID === sessionID) markIdle();
          return;
        case 'session.status': {
          if (event.properties.sessionID !== sessionID) return;
          const status = event.properties.status;
          if (status.type === 'idle') markIdle();
          if (status.type === 'retry') {
            report(`model call failed (attempt ${status.attempt}): ${status.message}`);
            if (status.attempt > maxRetries) {
              failure = `The model provider failed ${status.attempt} times: ${status.message}`;
              abort('error');
            }
          }
          return;
        }
        default:
          return;
      }
    };

    const subscription = await client.event.subscribe({ directory }, { signal: events.signal });
    const pump = (async () => {
      try {
        for await (const event of subscription.stream) onEvent(event as OpencodeEvent);
      } catch (error) {
        if (!events.signal.aborted) streamError = error instanceof Error ? error.message : String(error);
      }
    })();

    function abort(reason: 'timeout' | 'cancelled' | 'error'): void {
      if (stopReason !== undefined) return;
      stopReason = reason;
      report(reason === 'timeout' ? `timeout after ${args.timeout_s} s: aborting` : `${reason}: aborting`);
      void client.session.abort({ sessionID, directory }).catch(() => undefined);
    }
    const timer = setTimeout(() => abort('timeout'), args.timeout_s * 1000);
    const onCancel = (): void => abort('cancelled');
    call.signal?.addEventListener('abort', onCancel, { once: true });
    try {
      await connected;
      if (call.signal?.aborted) abort('cancelled');
      if (stopReason === undefined) {
        const accepted = await client.session.promptAsync({
          sessionID,
          directory,
          agent: args.agent,
          ...(model === undefined ? {} : { model }),
          parts: [{ type: 'text', text: args.task }],
        });
        if (accepted.error !== undefined) {
          fail(ErrorCode.INTERNAL, `OpenCode did not accept the task: ${apiErrorText(accepted.error)}.`);
        }
        sent = true;
        report(`task sent to OpenCode (agent ${args.agent})`);
        await idle;
      }
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
      call.signal?.removeEventListener('abort', onCancel);
      events.abort();
      await pump;
    }
    const messages = await client.session.messages({ sessionID, directory });
    if (messages.data === undefined) {
      fail(
        ErrorCode.INTERNAL,
        `OpenCode did not return the session's messages: ${apiErrorText(messages.error)}.`,
      );
    }
    return summarizeTurn({
      sessionID,
      directory,
      messages: messages.data,
      rejected,
      stopReason,
      cap: this.options.outputCap ?? DEFAULT_OUTPUT_CAP,
      ...(streamError === undefined ? {} : { streamError }),
      ...(failure === undefined ? {} : { failure }),
    });
  }
}

function checkDir(dir: string): void {
  if (!isAbsolute(dir)) {
    fail(ErrorCode.INVALID_ARGUMENT, `dir = ${JSON.stringify(dir)}: must be an absolute path.`);
  }
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) fail(ErrorCode.INVALID_ARGUMENT, `dir = ${JSON.stringify(dir)}: no such directory.`);
}

async function checkAgent(client: OpencodeClient, args: DelegateTaskArgs): Promise<void> {
  const agents = await client.app.agents({ directory: args.dir });
  if (agents.data === undefined) {
    fail(ErrorCode.DELEGATE_UNAVAILABLE, `OpenCode did not list its agents: ${apiErrorText(agents.error)}.`);
  }
  const names = agents.data.map((a) => a.name);
  if (!names.includes(args.agent)) {
    fail(
      ErrorCode.INVALID_ARGUMENT,
      `agent = ${JSON.stringify(args.agent)}: this OpenCode server has no such agent (it has ${names.join(', ')}).`,
    );
  }
}

async function checkModel(
  client: OpencodeClient,
  directory: string,
  model: string,
): Promise<{ providerID: string; modelID: string }> {
  const slash = model.indexOf('/');
  const providerID = model.slice(0, slash);
  const modelID = model.slice(slash + 1);
  const providers = await client.config.providers({ directory });
  if (providers.data === undefined) {
    fail(
      ErrorCode.DELEGATE_UNAVAILABLE,
      `OpenCode did not list its providers: ${apiErrorText(providers.error)}.`,
    );
  }
  const valid = providers.data.providers.flatMap((p) => Object.keys(p.models).map((m) => `${p.id}/${m}`));
  const provider = providers.data.providers.find((p) => p.id === providerID);
  if (provider === undefined || !(modelID in provider.models)) {
    const shown =
      valid.length > 30 ? `${valid.slice(0, 30).join(', ')}, … (${valid.length} in all)` : valid.join(', ');
    fail(
      ErrorCode.INVALID_ARGUMENT,
      provider === undefined
        ? `model = ${JSON.stringify(model)}: OpenCode has no provider ${JSON.stringify(providerID)} (valid models: ${shown || 'none configured'}).`
        : `model = ${JSON.stringify(model)}: provider ${JSON.stringify(providerID)} has no model ${JSON.stringify(modelID)} (valid models: ${shown}).`,
    );
  }
  return { providerID, modelID };
}
