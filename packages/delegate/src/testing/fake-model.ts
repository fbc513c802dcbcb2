/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for offline tests of delegation:
 * streamed answers (SSE, `data: [DONE]`) with text or `tool_calls`, HTTP errors, or a hang until the
 * client closes the connection. It records every request and every connection the client closed early.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of the model. */
export type FakeTurn =
  | { text: string }
  | { tool: string; args: Record<string, unknown> }
  | { status: number; message: string }
  | { hang: true };

/** A chat-completions request as the fake server received it. */
export interface FakeRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools: string[];
  /** The system prompt(s), joined. */
  system: string;
}

/** The running fake model. */
export interface FakeModel {
  /** Base URL for the provider's `baseURL` option (ends in `/v1`). */
  baseURL: string;
  /** Requests for the main model (title requests excluded), in order. */
  requests: FakeRequest[];
  /** How many requests the client abandoned (closed the connection before the answer ended). */
  closedEarly: number;
  /** Answers for the next main-model requests, consumed in order; when empty the model says "Done.". */
  script: FakeTurn[];
  /** Resolves once `predicate` holds (checked on every request and closed connection). */
  until(predicate: () => boolean): Promise<void>;
  close(): Promise<void>;
}

/** The model id the fake server treats as the title generator: it always answers with a short title. */
export const FAKE_TITLE_MODEL = 'title';

function chunk(model: string, delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function usage(model: string): string {
  const body = {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function systemOf(messages: FakeRequest['messages']): string {
  return messages
    .filter((m) => m.role === 'system')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: { text?: string }) => p.text ?? '').join('\n')
          : '',
    )
    .join('\n');
}

/** Starts the fake model server on 127.0.0.1 (random port). */
export async function startFakeModel(script: FakeTurn[] = []): Promise<FakeModel> {
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const check of [...waiters]) check();
  };
  const state: FakeModel = {
    baseURL: '',
    requests: [],
    closedEarly: 0,
    script,
    until: (predicate) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (predicate()) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      }),
    close: () => closeServer(server),
  };

  const answer = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    let parsed: {
      model?: string;
      messages?: FakeRequest['messages'];
      tools?: Array<{ function?: { name?: string } }>;
    };
    try {
      parsed = JSON.parse(body);
    } catch {
      res.writeHead(400).end('bad json');
      return;
    }
    const model = parsed.model ?? '';
    const messages = parsed.messages ?? [];
    if (model === FAKE_TITLE_MODEL) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        `${chunk(model, { role: 'assistant', content: 'A task' })}${chunk(model, {}, 'stop')}data: [DONE]\n\n`,
      );
      return;
    }
    const request: FakeRequest = {
      model,
      messages,
      tools: (parsed.tools ?? []).map((t) => t.function?.name ?? '').filter((n) => n !== ''),
      system: systemOf(messages),
    };
    state.requests.push(request);
    const turn = state.script.shift() ?? { text: 'Done.' };
    let finished = false;
    res.on('close', () => {
      if (!finished) {
        state.closedEarly += 1;
        notify();
      }
    });
    notify();
    if ('status' in turn) {
      finished = true;
      res.writeHead(turn.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: turn.message, type: 'server_error', code: null } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if ('hang' in turn) {
      res.write(chunk(model, { role: 'assistant', content: '' }));
      return;
    }
    let out = chunk(model, { role: 'assistant', content: '' });
    if ('text' in turn) {
      out += chunk(model, { content: turn.text });
      out += chunk(model, {}, 'stop');
    } else {
      out += chunk(model, {
        tool_calls: [
          {
            index: 0,
            id: `call_${state.requests.length}`,
            type: 'function',
            function: { name: turn.tool, arguments: JSON.stringify(turn.args) },
          },
        ],
      });
      out += chunk(model, {}, 'tool_calls');
    }
    out += usage(model);
    out += 'data: [DONE]\n\n';
    finished = true;
    res.end(out);
    void req;
  };

  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => {
      body += part;
    });
    req.on('end', () => answer(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
