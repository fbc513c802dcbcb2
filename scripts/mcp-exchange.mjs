/**
 * One short MCP conversation over a server's stdio, for the install checks (pack-install.mjs,
 * fresh-clone-check.mjs): spawn the server, `initialize`, then each request in turn, then stdin EOF (the
 * server shuts down) and wait for its exit. Bounded in time; the server is killed when the bound passes.
 */

import { spawn } from 'node:child_process';

/**
 * Runs the conversation; resolves with each request's `result` (in order), `times`: the ms from the spawn to
 * the `initialize` answer and then to each request's answer, and the server's stderr. Rejects when the server
 * exits early, answers with an error, or the time bound passes.
 */
export function mcpExchange({
  command,
  args = [],
  env = process.env,
  cwd,
  requests = [],
  timeoutMs = 60_000,
}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const results = [];
    const times = [];
    let stderr = '';
    let buffer = '';
    let failed = false;
    const fail = (message) => {
      if (failed) return;
      failed = true;
      child.kill('SIGKILL');
      reject(new Error(`${message}\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const next = () => {
      const request = requests[results.length];
      if (request === undefined) child.stdin.end();
      else send({ jsonrpc: '2.0', id: results.length + 2, ...request });
    };
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buffer += d;
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.trim() === '') continue;
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          fail(`not JSON-RPC on stdout: ${line.slice(0, 200)}`);
          return;
        }
        if (message.error) fail(`error answer: ${line.slice(0, 500)}`);
        else if (message.id === 1) {
          times.push(performance.now() - started);
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
          next();
        } else if (message.id === results.length + 2) {
          times.push(performance.now() - started);
          results.push(message.result);
          next();
        }
      }
    });
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (failed) return;
      if (results.length < requests.length)
        fail(`the server exited (${code}) after ${results.length} answers`);
      else resolve({ results, times, stderr });
    });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'conch-install-check', version: '0' },
      },
    });
  });
}

/** The text blocks of a `tools/call` result, joined. */
export function resultText(result) {
  return (result?.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}
